/**
 * A webhook URL as it may be shown (the deliveries API, the inspector, logs): its user and
 * password, and the value of each query parameter, become `***`. A receiver's URL often carries
 * its credentials there (`https://user:pass@…`, `?token=…`).
 */
export function redactedUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not a URL: nothing in it can be told apart from a secret.
    return '***';
  }
  const userinfo = url.username || url.password ? '***@' : '';
  const query = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=***`).join('&');
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${query ? `?${query}` : ''}`;
}

const SECRET_PARAMETER = /pass|secret|token|key/i;

/**
 * A store location as the banner and the logs may show it: a URL's user and password, and any
 * query parameter that looks like a secret (`?password=`, `sslkey=`), become `***`.
 */
export function redactedLocation(location: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return location;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    // Not a URL after all: show only its scheme, since what follows may hold a secret.
    return `${location.slice(0, location.indexOf('://') + 3)}***`;
  }
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAMETER.test(name)) url.searchParams.set(name, '***');
  }
  const userinfo = url.username || url.password ? '***@' : '';
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${url.search.replaceAll('%2A%2A%2A', '***')}`;
}

import { BatonError } from '@baton/contracts';
import { WEBHOOK_MESSAGES } from '../messages.js';
import type { WebhookEndpoint, WebhookOptions } from '../options.js';
import { type DestinationRules, refusedLiteral } from './destinations.js';

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

export function checkSecret(secret: string): void {
  const base64 = SECRET.exec(secret)?.[1];
  const bytes = base64 === undefined ? 0 : Buffer.from(base64, 'base64').length;
  if (bytes < 24 || bytes > 64) throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badSecret);
}

export function checkUrl(url: string): URL {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badUrl(url));
  }
  return parsed;
}

/**
 * Why an endpoint cannot be used (a URL that is not http(s), a secret not of Standard Webhooks'
 * form, a destination written as an address the rules refuse), or undefined when it can, as far
 * as can be told before its name is looked up. A host checks its configuration with it at start.
 */
export function webhookEndpointProblem(
  endpoint: WebhookEndpoint,
  allow: WebhookOptions['allow'] = {},
  allowedBy?: WebhookOptions['allowedBy'],
): string | undefined {
  try {
    checkEndpoint(endpoint, rulesOf({ allow, ...(allowedBy ? { allowedBy } : {}) }));
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^createRuntime: webhooks: /, '');
  }
}

export function rulesOf(options: Pick<WebhookOptions, 'allow' | 'allowedBy'>): DestinationRules {
  return {
    loopback: options.allow?.loopback ?? false,
    private: options.allow?.private ?? false,
    ...(options.allowedBy ? { allowedBy: options.allowedBy } : {}),
  };
}

/** An endpoint that can be used: a URL, a secret of the right form, and a destination the rules allow. */
export function checkEndpoint(endpoint: WebhookEndpoint, rules: DestinationRules): URL {
  const url = checkUrl(endpoint.url);
  checkSecret(endpoint.secret);
  const refused = refusedLiteral(url, rules);
  if (refused) throw new BatonError('invalid_definition', `createRuntime: webhooks: ${refused}`);
  return url;
}

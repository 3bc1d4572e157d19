import type { WebhookEndpoint, WebhookOptions } from '@baton/runtime';
import { redactedUrl, webhookEndpointProblem } from '@baton/runtime';
import { ConfigError, isLoopback, type ServerConfig } from './config.js';
import { tenantOfId } from './tenancy.js';

/** A delivery as the API lists it: one attempted before URLs were redacted when stored is redacted now. */
export function shownDelivery<T extends { lastAttempt?: { url: string } }>(delivery: T): T {
  if (!delivery.lastAttempt) return delivery;
  return {
    ...delivery,
    lastAttempt: { ...delivery.lastAttempt, url: redactedUrl(delivery.lastAttempt.url) },
  };
}

/** Where a webhook goes and its secret, as configured. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/**
 * The runtime's `webhooks.endpoint` for a server with tenants: a session's notifications go to its
 * tenant's own webhook, with ids as the tenant knows them (no `tenant/` prefix), or else to the
 * server's webhook, with ids as the server keeps them. Pass it to `createRuntime({ webhooks })`.
 */
export function webhookEndpoints(options: {
  webhook?: WebhookTarget;
  tenants?: Record<string, WebhookTarget>;
}): (sessionId: string) => WebhookEndpoint | undefined {
  const tenants = new Map(
    Object.entries(options.tenants ?? {}).map(([tenant, target]): [string, WebhookEndpoint] => {
      const prefix = `${tenant}/`;
      return [tenant, { ...target, showId: (id) => (id.startsWith(prefix) ? id.slice(prefix.length) : id) }];
    }),
  );
  return (sessionId) => tenants.get(tenantOfId(sessionId)) ?? options.webhook;
}

/** The settings that allow each kind of destination, as a refusal names them. */
export const WEBHOOK_ALLOWED_BY = {
  loopback: '--webhook-allow-loopback (BATON_WEBHOOK_ALLOW_LOOPBACK=true, webhook.allowLoopback)',
  private: '--webhook-allow-private (BATON_WEBHOOK_ALLOW_PRIVATE=true, webhook.allowPrivate)',
} as const;

/** Where webhooks go, as the start banner says it (credentials and query values hidden). */
export function webhookDestinations(config: ServerConfig): string | undefined {
  const tenants = Object.keys(config.tenantWebhooks ?? {});
  const parts = [
    ...(config.webhook ? [redactedUrl(config.webhook.url)] : []),
    ...(tenants.length > 0 ? [`tenants' own for ${tenants.join(', ')}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * The webhooks of `baton serve`: each configured endpoint checked now, so that a bad URL, secret or
 * refused destination stops the start in one line. The server's settings say which destinations
 * beside public ones every webhook may have, tenants' included; loopback is allowed when the
 * server itself listens on loopback, unless they say otherwise.
 */
export function webhooksOf(config: ServerConfig): WebhookOptions | undefined {
  const { webhook, tenantWebhooks = {} } = config;
  if (!webhook && Object.keys(tenantWebhooks).length === 0) return undefined;
  const allow = {
    loopback: config.webhookAllow?.loopback ?? isLoopback(config.host),
    private: config.webhookAllow?.private ?? false,
  };
  const configured: Array<[string, WebhookTarget]> = [
    ...(webhook ? [['webhook', webhook] as [string, WebhookTarget]] : []),
    ...Object.entries(tenantWebhooks).map(([tenant, target]): [string, WebhookTarget] => [
      `tenantWebhooks.${tenant}`,
      target,
    ]),
  ];
  for (const [where, target] of configured) {
    const problem = webhookEndpointProblem(target, allow, WEBHOOK_ALLOWED_BY);
    if (problem) throw new ConfigError(`bad configuration: ${where}: ${problem}`);
  }
  const target = webhook && { url: webhook.url, secret: webhook.secret };
  return {
    endpoint: webhookEndpoints({ ...(target ? { webhook: target } : {}), tenants: tenantWebhooks }),
    allow,
    allowedBy: WEBHOOK_ALLOWED_BY,
    ...(webhook?.retryScheduleMs ? { retryScheduleMs: webhook.retryScheduleMs } : {}),
  };
}

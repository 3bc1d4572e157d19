import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What a browser may do to a server it can reach, and which host a request is for. A server on loopback with no tokens is open to
 * any page the user visits: a page can POST to it (a form needs no CORS), and a page whose name
 * was made to point at 127.0.0.1 (DNS rebinding) can read from it too. So:
 * - a request names one host: one Host header, and an absolute-form target only for that host;
 * - the Host header must name this server (on by default without tokens, or when hosts are given);
 * - a POST must say it is JSON (a form cannot, and a cross-origin script must ask first);
 * - a request that changes state and says it comes from another site (`Origin`,
 *   `Sec-Fetch-Site`) is refused. The inspector, served from the server itself, is same-origin.
 */
export interface WebSafetyOptions {
  /**
   * Host names (no port) that requests may name. Default without tokens: `localhost`,
   * `127.0.0.1` and `::1`; with tokens, any (a token is what a browser cannot forge).
   */
  allowedHosts?: readonly string[];
  /** Origins besides the server's own that may change state (`https://app.example.com`). */
  allowedOrigins?: readonly string[];
}

export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The host name of a Host header, without its port (`[::1]:8787` is `::1`). */
function hostName(header: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed) return (bracketed[1] as string).toLowerCase();
  return header.replace(/:\d+$/, '').toLowerCase();
}

/** The port a Host header or an origin names, or the scheme's own. */
function portOf(authority: string, scheme: string): string {
  const port = /:(\d+)$/.exec(authority.replace(/^\[[^\]]*\]/, ''))?.[1];
  return port ?? (scheme === 'https:' ? '443' : '80');
}

/**
 * Whether a page at `origin` is this server itself: its origin names the Host the request was sent
 * to, or both name a loopback name on the same port (`http://localhost:8787` for a request to
 * `127.0.0.1:8787`: the same server, reached by two names).
 */
function isSameServer(origin: string, host: string): boolean {
  if (origin === `http://${host}` || origin === `https://${host}`) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const loopback = (name: string) => LOOPBACK_HOSTS.includes(name);
  return (
    loopback(hostName(url.host)) &&
    loopback(hostName(host)) &&
    portOf(url.host, url.protocol) === portOf(host, 'http:')
  );
}

export type WebSafetyRefusal = { status: number; code: string; message: string };

/** The request's target when it is in absolute form (`GET http://host/path`), else undefined. */
function absoluteTarget(target: string | undefined): URL | undefined {
  if (!target || !/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return undefined;
  try {
    return new URL(target);
  } catch {
    return undefined;
  }
}

/**
 * A request must name one host: a second Host header, or an absolute-form target naming another
 * host than its Host header, is what a cache or a proxy in front may read one way and this server
 * another (request smuggling, cache poisoning).
 */
function ambiguousHost(request: {
  headers: FastifyRequest['headers'];
  raw: Pick<FastifyRequest['raw'], 'url' | 'rawHeaders'>;
}): WebSafetyRefusal | undefined {
  const { rawHeaders } = request.raw;
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] as string).toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) {
    return {
      status: 400,
      code: 'invalid_host',
      message: `a request names its host once, not in ${hosts} Host headers`,
    };
  }
  const target = absoluteTarget(request.raw.url);
  const host = request.headers.host ?? '';
  if (target && target.host.toLowerCase() !== host.toLowerCase()) {
    return {
      status: 421,
      code: 'misdirected_request',
      message: `the request is for ${JSON.stringify(target.host)}, not for this server (${JSON.stringify(host)})`,
    };
  }
  return undefined;
}

/** Why a request is refused, or undefined when it may go on. */
export function webSafetyRefusal(
  request: Pick<FastifyRequest, 'method' | 'headers'> & {
    raw: Pick<FastifyRequest['raw'], 'url' | 'rawHeaders'>;
  },
  options: { allowedHosts: ReadonlySet<string> | undefined; allowedOrigins: ReadonlySet<string> },
): WebSafetyRefusal | undefined {
  const ambiguous = ambiguousHost(request);
  if (ambiguous) return ambiguous;
  const host = request.headers.host ?? '';
  if (options.allowedHosts && !options.allowedHosts.has(hostName(host))) {
    return {
      status: 403,
      code: 'forbidden_host',
      message: `the Host header ${JSON.stringify(host)} names none of this server's hosts`,
    };
  }
  if (!STATE_CHANGING.has(request.method)) return undefined;
  const origin = request.headers.origin;
  if (origin !== undefined && !isSameServer(origin, host)) {
    if (!options.allowedOrigins.has(origin)) {
      return {
        status: 403,
        code: 'cross_site_request',
        message: `requests from ${origin} may not change anything here`,
      };
    }
  } else if (origin === undefined && request.headers['sec-fetch-site'] === 'cross-site') {
    return {
      status: 403,
      code: 'cross_site_request',
      message: 'requests from another site may not change anything here',
    };
  }
  if (request.method === 'POST') {
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      return {
        status: 415,
        code: 'unsupported_media_type',
        message: `a POST must be application/json, not ${type === '' ? 'without a content type' : type}`,
      };
    }
  }
  return undefined;
}

/**
 * A Fastify `onRequest` hook that answers refused requests in the API's error format, or, on the
 * routes in `jsonRpc` (MCP), as a JSON-RPC error that an MCP client can read.
 */
export function webSafetyHook(
  options: WebSafetyOptions & { authenticated: boolean; jsonRpc?: readonly string[] },
) {
  const hosts = options.allowedHosts ?? (options.authenticated ? undefined : LOOPBACK_HOSTS);
  const settings = {
    allowedHosts: hosts && new Set(hosts.map((host) => host.toLowerCase())),
    allowedOrigins: new Set(options.allowedOrigins ?? []),
  };
  const jsonRpc = new Set(options.jsonRpc ?? []);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const refusal = webSafetyRefusal(request, settings);
    if (!refusal) return;
    reply.code(refusal.status);
    if (jsonRpc.has(request.routeOptions.url ?? '')) {
      return reply.send({ jsonrpc: '2.0', error: { code: -32000, message: refusal.message }, id: null });
    }
    return reply.send({ error: { code: refusal.code, message: refusal.message } });
  };
}

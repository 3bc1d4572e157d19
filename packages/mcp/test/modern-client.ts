import type { McpHandler, McpScope } from '../src/index.js';

export const MODERN = '2026-07-28';

/** A client's fetch that goes straight to the handler, as a real request would (with its Host). */
export const fetchVia = (mcp: McpHandler) => (url: string | URL, init?: RequestInit) => {
  const request = new Request(url, init);
  request.headers.set('host', 'localhost');
  return mcp.fetch(request);
};

/**
 * The requester's raw path for 2026-07-28 task traffic, which the SDK client cannot frame: one
 * POST to the handler per request, with the standard routing headers.
 */
export function rawDispatch(mcp: McpHandler, headers: Record<string, string> = {}) {
  let id = 0;
  return async (request: unknown) => {
    const { method, params = {} } = request as { method: string; params?: Record<string, unknown> };
    const name = (params.name ?? params.taskId) as string | undefined;
    const response = await mcp.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: {
          host: 'localhost',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': method,
          ...(name === undefined ? {} : { 'mcp-name': name }),
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      }),
    );
    const text = await response.text();
    // A response that streamed (SSE) ends with the JSON-RPC response as its last data line.
    const json = response.headers.get('content-type')?.includes('text/event-stream')
      ? (
          text
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .at(-1) ?? ''
        ).slice(6)
      : text;
    const message = JSON.parse(json) as { result?: unknown; error?: { code: number; message: string } };
    return message.error
      ? { kind: 'error' as const, error: message.error }
      : { kind: 'result' as const, result: message.result as never };
  };
}

/** A 2026-07-28 client that frames each request's `_meta` envelope itself, with these capabilities. */
export function modernClient(
  mcp: McpHandler,
  headers: Record<string, string>,
  capabilities: Record<string, unknown>,
) {
  const dispatch = rawDispatch(mcp, headers);
  return (method: string, params: Record<string, unknown>) =>
    dispatch({
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    });
}

/** A tenant whose ids the runtime keeps under `tenant/`. */
export function scopeOf(tenant: string): McpScope {
  return {
    tenant,
    inside: (id) => `${tenant}/${id}`,
    outside: (id) => id.slice(tenant.length + 1),
    newCallId: () => `${tenant}/${crypto.randomUUID()}`,
  };
}

/** Two tenants, by their bearer tokens. */
export const TENANTS: Record<string, McpScope> = {
  'Bearer token-a': scopeOf('acme'),
  'Bearer token-b': scopeOf('bolt'),
};

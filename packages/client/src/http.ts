import { BatonClientError, type ClientErrorCode, type RequestIssue } from './errors.js';

/** How the client reaches the server: its address, token and `fetch`. */
export interface Connection {
  /** Where Baton's API is mounted: `http://localhost:8787`, or with the prefix it is under. */
  baseUrl: string;
  /** A bearer token, when the server has tokens. */
  token?: string | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /** The `fetch` to use (the global one by default). */
  fetch?: typeof globalThis.fetch | undefined;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
}

/** The URL of `path` under the connection's base, with the query's defined values. */
export function urlOf(connection: Connection, path: string, query: RequestOptions['query'] = {}): string {
  const url = new URL(`${connection.baseUrl.replace(/\/+$/, '')}${path}`);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.href;
}

/** Sends one request; no answer at all is a `network_error`, kept as the cause. */
export async function send(
  connection: Connection,
  method: 'GET' | 'POST',
  path: string,
  { query, body, headers, signal }: RequestOptions = {},
): Promise<Response> {
  const fetch = connection.fetch ?? globalThis.fetch;
  try {
    return await fetch(urlOf(connection, path, query), {
      method,
      headers: {
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(connection.token ? { authorization: `Bearer ${connection.token}` } : {}),
        ...connection.headers,
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new BatonClientError('network_error', `no answer from ${connection.baseUrl}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/** The error a refusal answers with: the server's code and message, or what the answer was. */
export async function refusalOf(response: Response): Promise<BatonClientError> {
  const text = await response.text();
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const details = {
    status: response.status,
    ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
  };
  const error = parsed(text) as
    | { error?: { code?: unknown; message?: unknown; issues?: unknown } }
    | undefined;
  const code = error?.error?.code;
  const message = error?.error?.message;
  if (typeof code !== 'string' || typeof message !== 'string') {
    return new BatonClientError(
      'invalid_response',
      `HTTP ${response.status} from ${response.url}, not an answer of Baton's: ${text.slice(0, 200)}`,
      details,
    );
  }
  const issues = Array.isArray(error?.error?.issues) ? (error.error.issues as RequestIssue[]) : [];
  return new BatonClientError(code as ClientErrorCode, message, { ...details, issues });
}

/** A successful answer's JSON body; anything else thrown as a `BatonClientError`. */
export async function jsonOf<T>(response: Response): Promise<T> {
  if (!response.ok) throw await refusalOf(response);
  const text = await response.text();
  const body = parsed(text);
  if (body === undefined) {
    throw new BatonClientError('invalid_response', `not JSON from ${response.url}: ${text.slice(0, 200)}`, {
      status: response.status,
    });
  }
  return body as T;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the caller says what it was instead.
    return undefined;
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

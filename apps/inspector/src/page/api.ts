/** The server's API as the page uses it: a bearer token kept for the tab, JSON, and SSE over fetch. */

const TOKEN_KEY = 'baton-inspector-token';

/** The server wants a token (or a different one). */
export class Unauthorized extends Error {
  override readonly name = 'Unauthorized';
}

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
};

function headers(json = false): Record<string, string> {
  const bearer = token.get();
  return {
    ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    ...(json ? { 'content-type': 'application/json' } : {}),
  };
}

async function answer<T>(response: Response): Promise<T> {
  if (response.status === 401) throw new Unauthorized('the server needs a token');
  const body = (await response.json()) as T & { error?: { message: string } };
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  return body;
}

export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: headers() }));
}

/**
 * A read whose answer may be that there is nothing: `undefined` for 404 (no such call) and for 400
 * (a search text that cannot be an id, so nothing has it).
 */
export async function getJsonIfAny<T>(path: string): Promise<T | undefined> {
  const response = await fetch(path, { headers: headers() });
  if (response.status === 404 || response.status === 400) {
    await response.body?.cancel();
    return undefined;
  }
  return answer<T>(response);
}

/** Every POST says it is JSON, with a body or without: the server refuses any other (see web-safety.ts). */
export async function postJson<T>(path: string, body?: object): Promise<T> {
  const init: RequestInit = { method: 'POST', headers: headers(true) };
  if (body !== undefined) init.body = JSON.stringify(body);
  return answer<T>(await fetch(path, init));
}

export interface StreamHandlers<T> {
  /** Each connection, the first and every reconnection: the place to catch up. */
  onOpen?: () => void;
  onMessage: (data: T, id: string | undefined) => void;
  onUnauthorized: () => void;
}

/**
 * Follows a Server-Sent Events stream (EventSource cannot send a token, so this reads it with
 * fetch) and reconnects after a second when it drops. `path` is asked again on each connection, so
 * a resumable stream can say where to resume. Returns a function that stops it.
 */
export function follow<T>(path: () => string, handlers: StreamHandlers<T>): () => void {
  const abort = new AbortController();
  const connect = async (): Promise<void> => {
    try {
      const response = await fetch(path(), { headers: headers(), signal: abort.signal });
      if (response.status === 401) return handlers.onUnauthorized();
      // The stream had its last event (a call that ended): nothing more will come, so no reconnect.
      if (response.status === 204) return;
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      handlers.onOpen?.();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += value;
        let end = buffered.indexOf('\n\n');
        while (end !== -1) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          end = buffered.indexOf('\n\n');
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data !== undefined) handlers.onMessage(JSON.parse(data) as T, id);
        }
      }
    } catch {
      // Dropped, or the server restarts: try again below, unless stopped.
    }
    if (!abort.signal.aborted) setTimeout(() => void connect(), 1_000);
  };
  void connect();
  return () => abort.abort();
}

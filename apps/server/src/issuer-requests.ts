/** How long one request to the OAuth issuer may take, body included, before it counts as failed. */
export const DEFAULT_ISSUER_TIMEOUT_MS = 5_000;
/** Requests to the issuer under way at once; past it, a request that needs one more is answered 503 at once. */
export const MAX_ISSUER_REQUESTS = 8;

/** The issuer could not be asked: it failed, hung past the timeout, or is asked too much already. */
export class IssuerUnavailable extends Error {}

/** Whether the issuer answered the last time it was asked, for `/healthz`. */
export interface IssuerHealth {
  reachable: boolean;
  /** Why the last request failed, when it did. */
  error?: string;
}

/**
 * Every request the server makes to its OAuth issuer (metadata, keys, introspection): each bounded
 * in time, and at most `maxInFlight` at once, so that an issuer that accepts connections and never
 * answers (or a flood of made-up tokens) costs each request a few seconds at most, never the server.
 */
export class IssuerRequests {
  readonly #timeoutMs: number;
  readonly #maxInFlight: number;
  #inFlight = 0;
  #health: IssuerHealth = { reachable: true };

  constructor(timeoutMs = DEFAULT_ISSUER_TIMEOUT_MS, maxInFlight = MAX_ISSUER_REQUESTS) {
    this.#timeoutMs = timeoutMs;
    this.#maxInFlight = maxInFlight;
  }

  get health(): IssuerHealth {
    return this.#health;
  }

  /** `fetch`, bounded: a request past the cap, or one that fails or times out, throws `IssuerUnavailable`. */
  readonly fetch = async (url: string | URL, init: RequestInit = {}): Promise<Response> => {
    if (this.#inFlight >= this.#maxInFlight) {
      throw new IssuerUnavailable(`the issuer is being asked ${this.#maxInFlight} things at once already`);
    }
    this.#inFlight++;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      const response = await fetch(url, { ...init, signal });
      // The body is read within the same bound: an issuer that sends headers and stalls fails too.
      const body = await response.arrayBuffer();
      this.#health = { reachable: true };
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      const message = timeout.aborted
        ? `the issuer did not answer within ${this.#timeoutMs} ms`
        : `the issuer cannot be reached: ${(error as Error).message}`;
      this.#health = { reachable: false, error: message };
      throw new IssuerUnavailable(message, { cause: error });
    } finally {
      this.#inFlight--;
    }
  };
}

import type { CallEvent, CallRecord } from '@baton/contracts';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { follow, getJson, getJsonIfAny, Unauthorized } from './api.js';

/** The calls a page of the list holds. */
const PAGE_SIZE = 500;
/** Events of one call within this long make one read of its record. */
const REFRESH_MS = 40;

interface CallPage {
  calls: CallRecord[];
  nextCursor?: string;
}

export interface Calls {
  calls: ReadonlyMap<string, CallRecord>;
  /** The store has older calls than the page read so far. */
  hasOlder: boolean;
  /** Reads the next page of older calls. */
  loadOlder: () => void;
  /** Reads from the store the calls a search names: the call of that id, those of that session or tool. */
  lookUp: (text: string) => void;
  /** Reads one call the page does not hold (opened by its address): false once it is known not to exist. */
  ensure: (callId: string) => Promise<boolean>;
}

function merged(
  previous: ReadonlyMap<string, CallRecord>,
  records: readonly CallRecord[],
): ReadonlyMap<string, CallRecord> {
  const next = new Map(previous);
  for (const record of records) next.set(record.callId, record);
  return next;
}

/**
 * The calls, kept fresh: the latest page on each (re)connection, then a read of a call after its
 * events; older pages and searched-for calls are added as they are asked for.
 */
export function useCalls(
  connection: number,
  onUnauthorized: () => void,
  onError: (error: unknown) => void,
): Calls {
  const [calls, setCalls] = useState<ReadonlyMap<string, CallRecord>>(new Map());
  const [cursor, setCursor] = useState<string>();
  const pending = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const handle = useCallback(
    (error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error)),
    [onUnauthorized, onError],
  );
  const add = useCallback((records: readonly CallRecord[]) => {
    if (records.length > 0) setCalls((previous) => merged(previous, records));
  }, []);

  useEffect(() => {
    const refresh = (callId: string) => {
      if (pending.current.has(callId)) return;
      pending.current.set(
        callId,
        setTimeout(() => {
          pending.current.delete(callId);
          getJson<CallRecord>(`/v1/calls/${encodeURIComponent(callId)}`)
            .then((record) => add([record]))
            .catch(handle);
        }, REFRESH_MS),
      );
    };
    const list = () =>
      getJson<CallPage>(`/v1/calls?limit=${PAGE_SIZE}`)
        .then((page) => {
          setCalls(new Map(page.calls.map((record) => [record.callId, record])));
          setCursor(page.nextCursor);
        })
        .catch(handle);
    return follow<CallEvent>(() => '/v1/events', {
      onOpen: list,
      onMessage: (event) => refresh(event.callId),
      onUnauthorized,
    });
  }, [connection, onUnauthorized, handle, add]);

  const loadOlder = useCallback(() => {
    if (cursor === undefined) return;
    getJson<CallPage>(`/v1/calls?limit=${PAGE_SIZE}&cursor=${cursor}`)
      .then((page) => {
        add(page.calls);
        setCursor(page.nextCursor);
      })
      .catch(handle);
  }, [cursor, add, handle]);

  const lookUp = useCallback(
    (text: string) => {
      const value = encodeURIComponent(text);
      // Lists, never `/v1/calls/<text>`: a search that names no call finds none, and is no 404.
      Promise.all([
        getJsonIfAny<CallPage>(`/v1/calls?callId=${value}`),
        getJsonIfAny<CallPage>(`/v1/calls?sessionId=${value}&limit=${PAGE_SIZE}`),
        getJsonIfAny<CallPage>(`/v1/calls?tool=${value}&limit=${PAGE_SIZE}`),
      ])
        .then(([byId, bySession, byTool]) =>
          add([...(byId?.calls ?? []), ...(bySession?.calls ?? []), ...(byTool?.calls ?? [])]),
        )
        .catch(handle);
    },
    [add, handle],
  );

  const ensure = useCallback(
    async (callId: string) => {
      try {
        const record = await getJsonIfAny<CallRecord>(`/v1/calls/${encodeURIComponent(callId)}`);
        if (record) add([record]);
        return record !== undefined;
      } catch (error) {
        handle(error);
        return true;
      }
    },
    [add, handle],
  );

  return { calls, hasOlder: cursor !== undefined, loadOlder, lookUp, ensure };
}

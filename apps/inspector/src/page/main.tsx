import type { CallEvent, CallRecord, CallStatus } from '@baton/contracts';
import type { MachineGraph } from '@baton/machine';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { follow, getJson, token, Unauthorized } from './api.js';
import { CallDetail } from './call-detail.js';
import { edgesOf, pathOf } from './call-path.js';
import { CallsTable, FilterBar, type Filters, matches } from './calls-table.js';
import { MachineDiagram } from './machine-diagram.js';
import { SessionPanel } from './session-panel.js';
import { substateOf } from './substate.js';
import { TokenPrompt } from './token-prompt.js';
import { ToolsPanel } from './tools-panel.js';
import { Waterfall } from './waterfall.js';
import { WebhooksPanel } from './webhooks-panel.js';

/** The newest calls the page keeps; the drawing counts these. */
const PAGE_SIZE = 500;
/** Events of one call within this long make one read of its record. */
const REFRESH_MS = 40;

function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** The calls, kept fresh: a list on each (re)connection, then a read of a call after its events. */
function useCalls(connection: number, onUnauthorized: () => void, onError: (error: unknown) => void) {
  const [calls, setCalls] = useState<ReadonlyMap<string, CallRecord>>(new Map());
  const pending = useRef(new Map<string, ReturnType<typeof setTimeout>>());

  useEffect(() => {
    const handle = (error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error));
    const refresh = (callId: string) => {
      if (pending.current.has(callId)) return;
      pending.current.set(
        callId,
        setTimeout(() => {
          pending.current.delete(callId);
          getJson<CallRecord>(`/v1/calls/${encodeURIComponent(callId)}`)
            .then((record) => setCalls((previous) => new Map(previous).set(record.callId, record)))
            .catch(handle);
        }, REFRESH_MS),
      );
    };
    const list = () =>
      getJson<{ calls: CallRecord[] }>(`/v1/calls?limit=${PAGE_SIZE}`)
        .then((page) => setCalls(new Map(page.calls.map((record) => [record.callId, record]))))
        .catch(handle);
    return follow<CallEvent>(() => '/v1/events', {
      onOpen: list,
      onMessage: (event) => refresh(event.callId),
      onUnauthorized,
    });
  }, [connection, onUnauthorized, onError]);
  return calls;
}

/** The open call's events: its stored ones, then live; resumed from the last seq after a drop. */
function useCallEvents(callId: string | undefined, connection: number, onUnauthorized: () => void) {
  const [events, setEvents] = useState<CallEvent[]>([]);
  useEffect(() => {
    setEvents([]);
    if (callId === undefined) return;
    let lastSeq = 0;
    return follow<CallEvent>(() => `/v1/calls/${encodeURIComponent(callId)}/events?after=${lastSeq}`, {
      onMessage: (event) => {
        lastSeq = event.seq;
        setEvents((previous) => [...previous, event]);
      },
      onUnauthorized,
    });
  }, [callId, connection, onUnauthorized]);
  return events;
}

function App() {
  const [connection, setConnection] = useState(0);
  const [needsToken, setNeedsToken] = useState(false);
  const [problem, setProblem] = useState<string>();
  const [graph, setGraph] = useState<MachineGraph>();
  const [selected, setSelected] = useState<string>();
  const [filters, setFilters] = useState<Filters>({ session: '', state: '', tool: '' });
  const now = useNow(250);

  const onUnauthorized = useCallback(() => setNeedsToken(true), []);
  const onError = useCallback((error: unknown) => setProblem(String(error)), []);
  const calls = useCalls(connection, onUnauthorized, onError);
  const events = useCallEvents(selected, connection, onUnauthorized);

  useEffect(() => {
    getJson<MachineGraph>('/v1/machine')
      .then(setGraph)
      .catch((error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error)));
  }, [connection, onUnauthorized, onError]);

  const records = useMemo(() => [...calls.values()].sort((a, b) => b.createdAt - a.createdAt), [calls]);
  const counts = useMemo(() => {
    const byState: Partial<Record<CallStatus, number>> = {};
    for (const record of records) byState[record.status] = (byState[record.status] ?? 0) + 1;
    return byState;
  }, [records]);
  const tools = useMemo(() => [...new Set(records.map((record) => record.toolName))].sort(), [records]);
  const path = useMemo(() => pathOf(events), [events]);
  const open = selected === undefined ? undefined : calls.get(selected);

  if (needsToken) {
    return (
      <main class="centered">
        <TokenPrompt
          onToken={(value) => {
            token.set(value);
            setNeedsToken(false);
            setConnection((n) => n + 1);
          }}
        />
      </main>
    );
  }

  const finalStates = new Set(graph?.states.filter((state) => state.final).map((state) => state.id));
  return (
    <main>
      <header class="top">
        <h1>Baton inspector</h1>
        <span class="muted">{records.length} calls</span>
      </header>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      {graph && (
        <MachineDiagram
          graph={graph}
          counts={counts}
          {...(open ? { path, pathEdges: edgesOf(path), substate: substateOf(open, events) } : {})}
        />
      )}
      <div class={open ? 'panes with-detail' : 'panes'}>
        <section>
          <ToolsPanel
            connection={connection}
            onUnauthorized={onUnauthorized}
            onError={onError}
            onStarted={setSelected}
          />
          <Waterfall calls={records} now={now} selected={selected} onSelect={setSelected} />
          <FilterBar
            filters={filters}
            states={graph?.states.map((state) => state.id) ?? []}
            tools={tools}
            onChange={setFilters}
          />
          <CallsTable
            calls={records.filter((record) => matches(record, filters))}
            now={now}
            selected={selected}
            onSelect={setSelected}
          />
          <WebhooksPanel connection={connection} onUnauthorized={onUnauthorized} onSelect={setSelected} />
        </section>
        {open && (
          <div class="side">
            <CallDetail
              record={open}
              ended={finalStates.has(open.status)}
              events={events}
              now={now}
              onClose={() => setSelected(undefined)}
              onError={onError}
            />
            <SessionPanel
              sessionId={open.sessionId}
              connection={connection}
              onUnauthorized={onUnauthorized}
              onError={onError}
            />
          </div>
        )}
      </div>
    </main>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

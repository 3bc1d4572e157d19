import type { CallEvent, CallStatus } from '@baton/contracts';
import type { MachineGraph } from '@baton/machine';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { follow, getJson, token, Unauthorized } from './api.js';
import { CallDetail } from './call-detail.js';
import { edgesOf, pathOf } from './call-path.js';
import { CallsTable, FilterBar, type Filters, matches } from './calls-table.js';
import { counted } from './format.js';
import { MachineDiagram } from './machine-diagram.js';
import { addressOf, callIdInAddress, sessionIdInAddress } from './route.js';
import { SessionPanel } from './session-panel.js';
import { substateOf } from './substate.js';
import { TokenPrompt } from './token-prompt.js';
import { ToolsPanel } from './tools-panel.js';
import { useCalls } from './use-calls.js';
import { Waterfall } from './waterfall.js';
import { WebhooksPanel } from './webhooks-panel.js';

/** A search waits this long after the last key before it asks the store. */
const SEARCH_DELAY_MS = 300;

const TABS = [
  ['calls', 'Calls'],
  ['tools', 'Tools'],
  ['time', 'Time view'],
  ['webhooks', 'Webhooks'],
] as const;
type Tab = (typeof TABS)[number][0];

function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
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

/** The open call, kept in the page's address: opening one adds a step to the history. */
function useSelectedCall(): [string | undefined, (callId: string | undefined) => void] {
  const [selected, setSelected] = useState(callIdInAddress);
  useEffect(() => {
    const fromAddress = () => setSelected(callIdInAddress());
    window.addEventListener('popstate', fromAddress);
    window.addEventListener('hashchange', fromAddress);
    return () => {
      window.removeEventListener('popstate', fromAddress);
      window.removeEventListener('hashchange', fromAddress);
    };
  }, []);
  const select = useCallback((callId: string | undefined) => {
    window.history.pushState(null, '', addressOf(callId));
    setSelected(callId);
  }, []);
  return [selected, select];
}

/** The session whose page is open (`#/sessions/<id>`), if any. */
function useSessionInAddress(): string | undefined {
  const [session, setSession] = useState(sessionIdInAddress);
  useEffect(() => {
    const fromAddress = () => setSession(sessionIdInAddress());
    window.addEventListener('popstate', fromAddress);
    window.addEventListener('hashchange', fromAddress);
    return () => {
      window.removeEventListener('popstate', fromAddress);
      window.removeEventListener('hashchange', fromAddress);
    };
  }, []);
  return session;
}

function App() {
  const [connection, setConnection] = useState(0);
  const [needsToken, setNeedsToken] = useState(false);
  const [problem, setProblem] = useState<string>();
  const [graph, setGraph] = useState<MachineGraph>();
  const [selected, select] = useSelectedCall();
  const [tab, setTab] = useState<Tab>('calls');
  const [filters, setFilters] = useState<Filters>({ search: '', state: '', tool: '', within: '' });
  const session = useSessionInAddress();
  const now = useNow(250);

  const onUnauthorized = useCallback(() => setNeedsToken(true), []);
  const onError = useCallback((error: unknown) => setProblem(String(error)), []);
  const { calls, hasOlder, loadOlder, lookUp, ensure } = useCalls(connection, onUnauthorized, onError);
  const events = useCallEvents(selected, connection, onUnauthorized);

  useEffect(() => {
    getJson<MachineGraph>('/v1/machine')
      .then(setGraph)
      .catch((error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error)));
  }, [connection, onUnauthorized, onError]);

  // A call opened by its address that is not among those read: read it, once.
  const asked = useRef(new Set<string>());
  useEffect(() => {
    if (selected === undefined || calls.has(selected) || asked.current.has(selected) || needsToken) return;
    asked.current.add(selected);
    void ensure(selected).then((found) => {
      if (!found) setProblem(`No call ${selected} is known to this server.`);
    });
  }, [selected, calls, ensure, needsToken]);

  // A session's page reads its calls, older ones too.
  useEffect(() => {
    if (session !== undefined) lookUp(session);
  }, [session, lookUp]);

  // A search also asks the store, for calls older than those read.
  useEffect(() => {
    const text = filters.search.trim();
    if (text === '') return;
    const timer = setTimeout(() => lookUp(text), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [filters.search, lookUp]);

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
        <span class="muted" data-call-count>
          {counted(records.length, 'call')}
          {hasOlder ? ' read, more stored' : ''}
        </span>
      </header>
      {problem && (
        <p class="problem" role="alert">
          {problem}{' '}
          <button type="button" onClick={() => setProblem(undefined)}>
            Dismiss
          </button>
        </p>
      )}
      {graph && (
        <MachineDiagram
          graph={graph}
          counts={counts}
          {...(open ? { path, pathEdges: edgesOf(path), substate: substateOf(open, events) } : {})}
        />
      )}
      <div class={open || session !== undefined ? 'panes with-detail' : 'panes'}>
        <section class="main-column">
          <div class="tabs" role="tablist">
            {TABS.map(([id, label]) => (
              <button
                key={id}
                type="button"
                role="tab"
                aria-selected={tab === id}
                class={tab === id ? 'current' : ''}
                onClick={() => setTab(id)}
              >
                {label}
              </button>
            ))}
          </div>
          {tab === 'calls' && (
            <div role="tabpanel" aria-label="Calls">
              {session !== undefined && (
                <p class="session-page" data-session-page={session}>
                  Session <code>{session}</code>: its calls, and what its model was told.{' '}
                  <a href={addressOf(undefined)}>All calls</a>
                </p>
              )}
              <FilterBar
                filters={filters}
                states={graph?.states.map((state) => state.id) ?? []}
                tools={tools}
                onChange={setFilters}
              />
              <CallsTable
                calls={records.filter(
                  (record) =>
                    matches(record, filters, now) && (session === undefined || record.sessionId === session),
                )}
                any={records.length > 0}
                now={now}
                selected={selected}
                onSelect={select}
              />
              {hasOlder && (
                <button type="button" class="older" onClick={loadOlder}>
                  Older calls
                </button>
              )}
            </div>
          )}
          {tab === 'tools' && (
            <ToolsPanel
              connection={connection}
              onUnauthorized={onUnauthorized}
              onError={onError}
              onStarted={select}
            />
          )}
          {tab === 'time' && <Waterfall calls={records} now={now} selected={selected} onSelect={select} />}
          {tab === 'webhooks' && (
            <WebhooksPanel connection={connection} onUnauthorized={onUnauthorized} onSelect={select} />
          )}
        </section>
        {!open && session !== undefined && (
          <div class="side">
            <SessionPanel
              sessionId={session}
              connection={connection}
              onUnauthorized={onUnauthorized}
              onError={onError}
            />
          </div>
        )}
        {open && (
          <div class="side">
            <CallDetail
              record={open}
              ended={finalStates.has(open.status)}
              events={events}
              now={now}
              onClose={() => select(undefined)}
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

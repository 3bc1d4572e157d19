import type { CallRecord } from '@baton/contracts';
import { useState } from 'preact/hooks';
import {
  describeProgress,
  elapsedMs,
  formatClock,
  formatDuration,
  fractionOf,
  hasEnded,
  stateLabel,
} from './format.js';
import { addressOf, sessionAddress } from './route.js';

export interface Filters {
  /** A call id, session or tool, or a part of one. */
  search: string;
  state: string;
  tool: string;
  /** Only the calls admitted within this many ms of now ('' for any time). */
  within: string;
}

/** The time ranges the filter offers, as [ms, words]. */
const RANGES = [
  ['300000', 'last 5 minutes'],
  ['3600000', 'last hour'],
  ['86400000', 'last 24 hours'],
] as const;

export function matches(record: CallRecord, filters: Filters, now: number): boolean {
  const search = filters.search.trim().toLowerCase();
  return (
    (filters.within === '' || now - record.createdAt <= Number(filters.within)) &&
    (search === '' ||
      [record.callId, record.sessionId, record.toolName].some((text) =>
        text.toLowerCase().includes(search),
      )) &&
    (filters.state === '' || record.status === filters.state) &&
    (filters.tool === '' || record.toolName === filters.tool)
  );
}

export interface FilterBarProps {
  filters: Filters;
  /** The machine's states, in its order. */
  states: string[];
  tools: string[];
  onChange: (filters: Filters) => void;
}

export function FilterBar({ filters, states, tools, onChange }: FilterBarProps) {
  return (
    <div class="filters">
      <input
        type="search"
        class="search"
        placeholder="Search call id, session or tool"
        aria-label="Search calls"
        value={filters.search}
        onInput={(event) => onChange({ ...filters, search: event.currentTarget.value })}
      />
      <select
        aria-label="Filter by state"
        value={filters.state}
        onChange={(event) => onChange({ ...filters, state: event.currentTarget.value })}
      >
        <option value="">every state</option>
        {states.map((state) => (
          <option key={state} value={state}>
            {state.replace('_', ' ')}
          </option>
        ))}
      </select>
      <select
        aria-label="Filter by time"
        value={filters.within}
        onChange={(event) => onChange({ ...filters, within: event.currentTarget.value })}
      >
        <option value="">any time</option>
        {RANGES.map(([ms, words]) => (
          <option key={ms} value={ms}>
            {words}
          </option>
        ))}
      </select>
      <select
        aria-label="Filter by tool"
        value={filters.tool}
        onChange={(event) => onChange({ ...filters, tool: event.currentTarget.value })}
      >
        <option value="">every tool</option>
        {tools.map((tool) => (
          <option key={tool} value={tool}>
            {tool}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * What the tool reported of its progress. Once the call ended, the bar is full if it succeeded and
 * gone otherwise (what it had done is still in the words).
 */
export function ProgressBar({ record }: { record: CallRecord }) {
  const { progress } = record;
  if (!progress) return null;
  const ended = hasEnded(record);
  if (ended && record.status !== 'succeeded') {
    return (
      <span class="progress">
        <span class="label">{describeProgress(progress)}</span>
      </span>
    );
  }
  const fraction = ended ? 1 : fractionOf(progress);
  return (
    <span class="progress" title={describeProgress(progress)}>
      <span class="bar" data-fraction={fraction ?? 'unknown'}>
        <span
          style={{ width: `${Math.round((fraction ?? 1) * 100)}%` }}
          class={fraction === undefined ? 'unknown' : ''}
        />
      </span>
      <span class="label">{describeProgress(progress)}</span>
    </span>
  );
}

export interface CallsTableProps {
  calls: CallRecord[];
  /** Whether the page holds any call at all (else nothing matched the filters). */
  any: boolean;
  now: number;
  selected: string | undefined;
  onSelect: (callId: string) => void;
}

/** The columns a table sorts by, and how: each compares two records, ascending. */
const SORTS = {
  admitted: (a: CallRecord, b: CallRecord) => a.createdAt - b.createdAt,
  tool: (a: CallRecord, b: CallRecord) => a.toolName.localeCompare(b.toolName),
  session: (a: CallRecord, b: CallRecord) => a.sessionId.localeCompare(b.sessionId),
  state: (a: CallRecord, b: CallRecord) => a.status.localeCompare(b.status),
  duration: (a: CallRecord, b: CallRecord, now: number) => elapsedMs(a, now) - elapsedMs(b, now),
} as const;
type SortColumn = keyof typeof SORTS;

interface Sort {
  column: SortColumn;
  descending: boolean;
}

function sorted(calls: CallRecord[], { column, descending }: Sort, now: number): CallRecord[] {
  const compare = SORTS[column];
  return [...calls].sort((a, b) => (descending ? -1 : 1) * compare(a, b, now));
}

/** A column's head: a button that sorts by it, and again the other way. */
function SortHead({
  column,
  sort,
  onSort,
}: {
  column: SortColumn;
  sort: Sort;
  onSort: (sort: Sort) => void;
}) {
  const active = sort.column === column;
  const order = active ? (sort.descending ? 'descending' : 'ascending') : 'none';
  return (
    <th aria-sort={order}>
      <button
        type="button"
        class="sort"
        data-sort={column}
        onClick={() => onSort({ column, descending: active ? !sort.descending : column === 'admitted' })}
      >
        {column}
        {active ? (sort.descending ? ' ▾' : ' ▴') : ''}
      </button>
    </th>
  );
}

/** The calls, newest first unless sorted otherwise: one row each, live; each row's tool is a link to it. */
export function CallsTable({ calls, any, now, selected, onSelect }: CallsTableProps) {
  const [sort, setSort] = useState<Sort>({ column: 'admitted', descending: true });
  if (!any) {
    return (
      <p class="empty">
        No calls yet. Run a tool from the Tools tab, <code>POST /v1/calls</code>, or call a tool over MCP.
      </p>
    );
  }
  if (calls.length === 0) return <p class="empty">No call matches.</p>;
  return (
    <div class="table-frame">
      <table class="calls">
        <colgroup>
          <col class="when" />
          <col class="tool" />
          <col class="session" />
          <col class="state" />
          <col class="duration" />
          <col class="progress" />
          <col class="status-text" />
        </colgroup>
        <thead>
          <tr>
            {(['admitted', 'tool', 'session', 'state', 'duration'] as const).map((column) => (
              <SortHead key={column} column={column} sort={sort} onSort={setSort} />
            ))}
            <th>progress</th>
            <th>status</th>
          </tr>
        </thead>
        <tbody>
          {sorted(calls, sort, now).map((record) => {
            const statusText = record.statusText ?? record.error?.message ?? '';
            return (
              <tr
                key={record.callId}
                data-call-id={record.callId}
                data-status={record.status}
                class={record.callId === selected ? 'selected' : ''}
                onClick={() => onSelect(record.callId)}
              >
                <td title={new Date(record.createdAt).toISOString()}>{formatClock(record.createdAt)}</td>
                <td title={`${record.toolName} (${record.callId})`}>
                  <a
                    class="call-link"
                    href={addressOf(record.callId)}
                    onClick={(event) => {
                      event.preventDefault();
                      event.stopPropagation();
                      onSelect(record.callId);
                    }}
                  >
                    {record.toolName}
                  </a>
                </td>
                <td title={record.sessionId}>
                  <a
                    class="session-link"
                    href={sessionAddress(record.sessionId)}
                    onClick={(event) => event.stopPropagation()}
                  >
                    {record.sessionId}
                  </a>
                </td>
                <td title={stateLabel(record)}>
                  <span class={`pill ${record.status}`}>{stateLabel(record)}</span>
                </td>
                <td>{formatDuration(elapsedMs(record, now))}</td>
                <td>
                  <ProgressBar record={record} />
                </td>
                <td class="status-text" title={statusText}>
                  {statusText}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

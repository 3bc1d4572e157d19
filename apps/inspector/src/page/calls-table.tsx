import type { CallRecord } from '@baton/contracts';
import { describeProgress, elapsedMs, formatDuration, fractionOf } from './format.js';

export interface Filters {
  session: string;
  state: string;
  tool: string;
}

export function matches(record: CallRecord, filters: Filters): boolean {
  return (
    (filters.session === '' || record.sessionId.includes(filters.session)) &&
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
        placeholder="session"
        aria-label="Filter by session"
        value={filters.session}
        onInput={(event) => onChange({ ...filters, session: event.currentTarget.value })}
      />
      <select
        aria-label="Filter by state"
        value={filters.state}
        onChange={(event) => onChange({ ...filters, state: event.currentTarget.value })}
      >
        <option value="">every state</option>
        {states.map((state) => (
          <option key={state} value={state}>
            {state}
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

export function ProgressBar({ record }: { record: CallRecord }) {
  const { progress } = record;
  if (!progress) return null;
  const fraction = fractionOf(progress);
  return (
    <span class="progress" title={describeProgress(progress)}>
      <span class="bar">
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
  now: number;
  selected: string | undefined;
  onSelect: (callId: string) => void;
}

/** The calls, newest first: one row each, live. */
export function CallsTable({ calls, now, selected, onSelect }: CallsTableProps) {
  if (calls.length === 0)
    return <p class="empty">No calls yet. Make one: POST /v1/calls, or call a tool over MCP.</p>;
  return (
    <table class="calls">
      <thead>
        <tr>
          <th>tool</th>
          <th>session</th>
          <th>state</th>
          <th>elapsed</th>
          <th>progress</th>
          <th>status</th>
        </tr>
      </thead>
      <tbody>
        {calls.map((record) => (
          <tr
            key={record.callId}
            data-call-id={record.callId}
            data-status={record.status}
            class={record.callId === selected ? 'selected' : ''}
            onClick={() => onSelect(record.callId)}
          >
            <td>{record.toolName}</td>
            <td>{record.sessionId}</td>
            <td>
              <span class={`pill ${record.status}`}>
                {record.approval === 'pending' ? 'awaiting approval' : record.status}
              </span>
            </td>
            <td>{formatDuration(elapsedMs(record, now))}</td>
            <td>
              <ProgressBar record={record} />
            </td>
            <td class="status-text">{record.statusText ?? record.error?.message ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

import type { CallRecord } from '@baton/contracts';
import { formatClock, formatDuration } from './format.js';

/** The newest calls the time view draws. */
const ROWS = 30;
/** Where the axis is marked, as fractions of the span drawn. */
const TICKS = [0, 0.25, 0.5, 0.75, 1] as const;

export interface WaterfallProps {
  calls: readonly CallRecord[];
  now: number;
  selected: string | undefined;
  onSelect: (callId: string) => void;
}

/** The recent calls on one time axis: each a bar from its creation to its end (or now), by its status. */
export function Waterfall({ calls, now, selected, onSelect }: WaterfallProps) {
  const recent = calls.slice(0, ROWS);
  if (recent.length === 0) return <p class="empty">No calls yet.</p>;
  const endOf = (record: CallRecord) => record.endedAt ?? now;
  const start = Math.min(...recent.map((record) => record.createdAt));
  const span = Math.max(1, Math.max(...recent.map(endOf)) - start);
  const percent = (ms: number) => `${((ms / span) * 100).toFixed(3)}%`;
  return (
    <section class="waterfall" aria-label="Time view">
      <p class="muted">
        The latest {recent.length === 1 ? 'call' : `${recent.length} calls`}, over {formatDuration(span)}
      </p>
      <ol>
        {[...recent].reverse().map((record) => (
          <li key={record.callId} data-waterfall-call={record.callId}>
            <button
              type="button"
              class={record.callId === selected ? 'selected' : ''}
              onClick={() => onSelect(record.callId)}
              title={`${record.toolName} ${record.callId}: ${record.status}, ${formatDuration(endOf(record) - record.createdAt)}`}
            >
              <span class="label">
                {record.toolName}{' '}
                <span class="muted">
                  · {record.sessionId} · {record.status.replace('_', ' ')}
                </span>
              </span>
              <span class="track">
                <span
                  class={`bar ${record.status}`}
                  style={{
                    left: percent(record.createdAt - start),
                    width: percent(endOf(record) - record.createdAt),
                  }}
                />
              </span>
            </button>
          </li>
        ))}
      </ol>
      <div class="axis" aria-hidden="true">
        <span class="label" />
        <span class="ticks">
          {TICKS.map((fraction) => (
            <span key={fraction} class="tick" style={{ left: `${fraction * 100}%` }}>
              {fraction === 0 ? formatClock(start) : `+${formatDuration(span * fraction)}`}
            </span>
          ))}
        </span>
      </div>
    </section>
  );
}

import type { CallEvent, CallRecord } from '@baton/contracts';
import { useState } from 'preact/hooks';
import { postJson } from './api.js';
import { ProgressBar } from './calls-table.js';
import { describeProgress, elapsedMs, formatDuration, formatTime, show } from './format.js';
import { substateOf } from './substate.js';

function describe(event: CallEvent): string {
  switch (event.type) {
    case 'queued':
      return `queued (${event.mode})`;
    case 'started':
      return `started, attempt ${event.attempt}`;
    case 'progress':
      return `progress ${describeProgress(event.progress)}`;
    case 'status':
      return `status: ${event.text}`;
    case 'log':
      return `${event.stream}: ${event.chunk}`;
    case 'retrying':
      return `retrying (attempt ${event.attempt}) in ${event.delayMs} ms: ${event.error.message}`;
    case 'backgrounded':
      return `backgrounded (${event.reason}) after ${event.afterMs} ms`;
    case 'succeeded':
      return 'succeeded';
    case 'failed':
      return `failed: ${event.error.message}`;
    case 'cancelled':
      return `cancelled: ${event.reason}`;
    case 'timed_out':
      return `timed out after ${event.timeoutMs} ms`;
    case 'notification':
      return `notification: ${event.title}`;
    case 'input_requested':
      return `asks for input: ${event.name} (${event.request.kind})`;
  }
}

export interface CallDetailProps {
  record: CallRecord;
  /** Whether the call is in a final state of the machine. */
  ended: boolean;
  events: readonly CallEvent[];
  now: number;
  onClose: () => void;
  onError: (error: unknown) => void;
}

/** One call: its controls, events with their times, arguments, output tail, and result or error. */
export function CallDetail({ record, ended, events, now, onClose, onError }: CallDetailProps) {
  const [reason, setReason] = useState('');
  const act = (action: string, body?: object) =>
    postJson(`/v1/calls/${encodeURIComponent(record.callId)}/${action}`, body).catch(onError);
  const pending = record.approval === 'pending';
  const substate = substateOf(record, events);
  const details = record.error?.details;
  return (
    <section class="detail" data-detail-of={record.callId}>
      <header>
        <h2>
          {record.toolName} <small>{record.callId}</small>
        </h2>
        <button type="button" class="close" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      <p>
        <span class={`pill ${record.status}`}>{record.status}</span>
        {substate && <span class="substate"> {substate.replace('_', ' ')}</span>} in session{' '}
        <code>{record.sessionId}</code>, {formatDuration(elapsedMs(record, now))}, attempt {record.attempt}{' '}
        <ProgressBar record={record} />
      </p>
      <div class="actions">
        {!ended && (
          <button type="button" onClick={() => act('cancel')}>
            Cancel
          </button>
        )}
        {pending && (
          <>
            <button type="button" onClick={() => act('approve')}>
              Approve
            </button>
            <input
              placeholder="reason"
              value={reason}
              onInput={(event) => setReason(event.currentTarget.value)}
            />
            <button type="button" disabled={reason === ''} onClick={() => act('reject', { reason })}>
              Reject
            </button>
          </>
        )}
      </div>
      <h3>Events</h3>
      <ol class="timeline">
        {events.map((event) => (
          <li key={event.seq} data-event={event.type}>
            <time>{formatTime(event.at)}</time> {describe(event)}
          </li>
        ))}
      </ol>
      <h3>Arguments</h3>
      <pre>{show(record.args)}</pre>
      {record.outputTail !== '' && (
        <>
          <h3>Output tail</h3>
          <pre>{record.outputTail}</pre>
        </>
      )}
      {record.error ? (
        <>
          <h3>Error</h3>
          <pre class="error">
            {record.error.code}: {record.error.message}
          </pre>
          {details && (
            <>
              <h3>What the model is not shown</h3>
              <pre class="error details" data-error-details>
                {details.stack ?? `${details.name ?? 'Error'}: ${details.message}`}
              </pre>
            </>
          )}
        </>
      ) : (
        record.status === 'succeeded' && (
          <>
            <h3>Result</h3>
            <pre>{show(record.result ?? record.output)}</pre>
          </>
        )
      )}
    </section>
  );
}

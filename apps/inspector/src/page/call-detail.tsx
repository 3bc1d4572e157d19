import type { CallEvent, CallRecord, Notification } from '@baton/contracts';
import { useEffect, useState } from 'preact/hooks';
import { getJson, postJson, Unauthorized } from './api.js';
import { ProgressBar } from './calls-table.js';
import {
  describeProgress,
  elapsedMs,
  formatDuration,
  formatTime,
  ranMs,
  show,
  stateLabel,
} from './format.js';
import { substateOf } from './substate.js';

function describeBackgrounded(event: Extract<CallEvent, { type: 'backgrounded' }>): string {
  switch (event.reason) {
    case 'approval':
      return 'awaits approval; the caller was answered at once';
    case 'mode':
      return 'went to the background at once (a background tool); the caller was answered';
    case 'budget':
      return `went to the background after ${formatDuration(event.afterMs)} (its inline budget); the caller was answered`;
    case 'handover':
      return `was handed over after ${formatDuration(event.afterMs)} (its process stopped); the caller was answered`;
  }
}

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
      return describeBackgrounded(event);
    case 'succeeded':
      return 'succeeded';
    case 'failed':
      return `failed: ${event.error.message}`;
    case 'cancelled':
      return `cancelled: ${event.reason}`;
    case 'timed_out':
      return event.stalled
        ? `stalled: no sign of progress for ${event.timeoutMs} ms`
        : `timed out after ${event.timeoutMs} ms`;
    case 'notification':
      return `notification: ${event.title}`;
    case 'input_requested':
      return `asks for input: ${event.name} (${event.request.kind})`;
    case 'update':
      return `update ${event.updateSeq} (${event.scheduling.replace('_', ' ')}): ${typeof event.value === 'string' ? event.value : JSON.stringify(event.value)}`;
    case 'still_running':
      return `its session was told it still runs, after ${formatDuration(event.runningForMs)}`;
    case 'message':
      return `read message ${event.messageSeq}: ${typeof event.message === 'string' ? event.message : JSON.stringify(event.message)}`;
  }
}

/**
 * The call as its caller sent it and as it was answered, in the API's words: what to paste into a
 * bug report, or into `POST /v1/calls` to make it again.
 */
function rawOf(record: CallRecord): Record<string, unknown> {
  const request = {
    name: record.toolName,
    args: record.args,
    sessionId: record.sessionId,
    callId: record.callId,
  };
  const reply = {
    callId: record.callId,
    status: record.status,
    ...(record.acknowledgement !== undefined ? { acknowledgement: record.acknowledgement } : {}),
    ...(record.output !== undefined ? { output: record.output } : {}),
    ...(record.error ? { error: { code: record.error.code, message: record.error.message } } : {}),
  };
  return { request, reply };
}

/** Which run the call is at; one that ended before any says why it never ran. */
function attemptOf(record: CallRecord, ended: boolean): string {
  if (record.attempt > 0) return `attempt ${record.attempt}`;
  if (!ended) return 'not started yet';
  if (record.error?.code === 'invalid_arguments')
    return 'refused: its arguments were invalid, so it never ran';
  return `it never ran (${record.error?.code ?? record.status})`;
}

/** The notification a call's `notification` event names, read once it exists. */
function useNotification(
  events: readonly CallEvent[],
  onError: (error: unknown) => void,
): Notification | undefined {
  const id = events.find((event) => event.type === 'notification')?.notificationId;
  const [notification, setNotification] = useState<Notification>();
  useEffect(() => {
    setNotification(undefined);
    if (id === undefined) return;
    let stopped = false;
    getJson<Notification[]>(`/v1/notifications?id=${encodeURIComponent(id)}`)
      .then(([found]) => !stopped && setNotification(found))
      .catch((error: unknown) => {
        // The page asks for a token again through its lists; this read just has nothing to show.
        if (!(error instanceof Unauthorized)) onError(error);
      });
    return () => {
      stopped = true;
    };
  }, [id, onError]);
  return notification;
}

/**
 * What the model was given of the call: the answer at its end when it ended inline; else the
 * acknowledgement it had at once, then the notification of its end.
 */
function ModelView({
  record,
  ended,
  notification,
}: {
  record: CallRecord;
  ended: boolean;
  notification: Notification | undefined;
}) {
  if (!record.detached) {
    if (!ended) return <p class="muted">Nothing yet: the caller waits for the call (inline).</p>;
    return (
      <div class="model-view" data-model-view="inline">
        <h4>Answered inline</h4>
        <pre>{record.error ? record.error.message : show(record.output)}</pre>
      </div>
    );
  }
  return (
    <div class="model-view" data-model-view="background">
      <h4>Answered at once</h4>
      <pre data-acknowledgement>
        {record.acknowledgement === undefined
          ? 'The acknowledgement was not kept (a call made before records kept it).'
          : show(record.acknowledgement)}
      </pre>
      <h4>Then, as a notification</h4>
      {notification ? (
        <pre data-notification-text>
          {notification.title}
          {'\n\n'}
          {notification.body}
        </pre>
      ) : (
        <p class="muted">{ended ? 'Being made.' : 'When the call ends.'}</p>
      )}
    </div>
  );
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
  const notification = useNotification(events, onError);
  const ran = ranMs(record, now);
  const total = elapsedMs(record, now);
  return (
    <section class="detail" data-detail-of={record.callId}>
      <header>
        <h2>
          {record.toolName} <small>{record.callId}</small>
        </h2>
        <a class="link" href={`#/calls/${encodeURIComponent(record.callId)}`}>
          Link to this call
        </a>
        <button type="button" class="close" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      <p>
        <span class={`pill ${record.status}`}>{stateLabel(record)}</span>
        {substate && !pending && <span class="substate"> {substate.replace('_', ' ')}</span>} in session{' '}
        <code>{record.sessionId}</code>,{' '}
        <span data-duration>
          {formatDuration(total)} since admission
          {ran !== undefined && Math.round(ran) !== Math.round(total) ? ` (ran ${formatDuration(ran)})` : ''}
        </span>
        , {attemptOf(record, ended)} <ProgressBar record={record} />
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
      <h3>What the model received</h3>
      <ModelView record={record} ended={ended} notification={notification} />
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
      <details class="raw" data-raw>
        <summary>Raw request and reply</summary>
        <pre>{show(rawOf(record))}</pre>
      </details>
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

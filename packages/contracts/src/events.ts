import type {
  CallError,
  CallStatus,
  ExecutionMode,
  LogStream,
  Progress,
  Scheduling,
  TerminalStatus,
} from './call.js';
import type { InputRequest } from './input.js';

interface CallEventBase {
  callId: string;
  sessionId: string;
  toolName: string;
  /** Numbered per call from 1, without gaps: a late subscriber can replay from any `seq`. */
  seq: number;
  /** Milliseconds since the epoch, on the runtime's clock. */
  at: number;
}

/**
 * The transition of the call machine that an event reports: the state the call left and the one it
 * entered (the same for an event within a state: a retry, a call detached while it waits). Events
 * stored before 0.2 carry neither.
 */
export interface CallTransition {
  from?: CallStatus;
  to?: CallStatus;
}

export type CallEvent =
  | (CallEventBase & CallTransition & { type: 'queued'; mode: ExecutionMode })
  | (CallEventBase & CallTransition & { type: 'started'; attempt: number })
  | (CallEventBase & { type: 'progress'; progress: Progress })
  | (CallEventBase & { type: 'status'; text: string })
  | (CallEventBase & { type: 'log'; stream: LogStream; chunk: string })
  | (CallEventBase &
      CallTransition & { type: 'retrying'; attempt: number; delayMs: number; error: CallError })
  | (CallEventBase &
      CallTransition & {
        type: 'backgrounded';
        reason: 'budget' | 'mode' | 'approval' | 'handover';
        afterMs: number;
      })
  | (CallEventBase & CallTransition & { type: 'succeeded'; output: unknown })
  | (CallEventBase & CallTransition & { type: 'failed'; error: CallError })
  | (CallEventBase & CallTransition & { type: 'cancelled'; reason: string })
  /** `stalled`: the run gave no sign of life for `timeoutMs` (its tool's `heartbeatTimeoutMs`). */
  | (CallEventBase & CallTransition & { type: 'timed_out'; timeoutMs: number; stalled?: true })
  | (CallEventBase & { type: 'notification'; notificationId: string; title: string })
  /** The tool asks its caller for input (`ctx.input`): answered with `runtime.inputs.resolve(key, ...)`. */
  | (CallEventBase & { type: 'input_requested'; key: string; name: string; request: InputRequest })
  /**
   * Steering: the tool read the message sent to it as the `messageSeq`-th (`runtime.steer`); `message`
   * is what its schema made of it.
   */
  | (CallEventBase & { type: 'message'; messageSeq: number; message: unknown })
  /** An intermediate result (`ctx.update`), as written: merged with those that came too fast after one. */
  | (CallEventBase & { type: 'update'; updateSeq: number; value: unknown; scheduling: Scheduling })
  /** Its session was told the call still runs (`notifyAfterMs`), this long after it was made. */
  | (CallEventBase & { type: 'still_running'; runningForMs: number });

export type CallEventType = CallEvent['type'];

/** A call event before the runtime numbers and stamps it. */
export type CallEventInput = CallEvent extends infer E
  ? E extends CallEvent
    ? Omit<E, keyof CallEventBase>
    : never
  : never;

/**
 * A failure the runtime caught and handled (a heartbeat that did not reach the store, a claim, a
 * recovery, a write it will try again): logged, and published for applications to count.
 */
export interface RuntimeFailure {
  /** What was being done: `heartbeat`, `claim`, `recovery`, `write`... */
  op: string;
  callId?: string;
  error: unknown;
  /** Milliseconds since the epoch, on the runtime's clock. */
  at: number;
  /**
   * A fault the runtime rides out or tries again (its store away for a while): logged at warn, and
   * nothing was lost by it. Absent for a failure that lost or refused something (logged at error).
   */
  retried?: true;
}

/** The final status an event announces, if it is the end of its call. */
export function endOf(event: CallEvent): TerminalStatus | undefined {
  switch (event.type) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return event.type;
    default:
      return undefined;
  }
}

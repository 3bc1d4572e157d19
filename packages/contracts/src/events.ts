import type { CallError, ExecutionMode, LogStream, Progress } from './call.js';

interface CallEventBase {
  callId: string;
  sessionId: string;
  toolName: string;
  /** Numbered per call from 1, without gaps: a late subscriber can replay from any `seq`. */
  seq: number;
  /** Milliseconds since the epoch, on the runtime's clock. */
  at: number;
}

export type CallEvent =
  | (CallEventBase & { type: 'queued'; mode: ExecutionMode })
  | (CallEventBase & { type: 'started'; attempt: number })
  | (CallEventBase & { type: 'progress'; progress: Progress })
  | (CallEventBase & { type: 'status'; text: string })
  | (CallEventBase & { type: 'log'; stream: LogStream; chunk: string })
  | (CallEventBase & { type: 'retrying'; attempt: number; delayMs: number; error: CallError })
  | (CallEventBase & { type: 'backgrounded'; reason: 'budget' | 'mode' | 'approval'; afterMs: number })
  | (CallEventBase & { type: 'succeeded'; output: unknown })
  | (CallEventBase & { type: 'failed'; error: CallError })
  | (CallEventBase & { type: 'cancelled'; reason: string })
  | (CallEventBase & { type: 'timed_out'; timeoutMs: number })
  | (CallEventBase & { type: 'notification'; notificationId: string; title: string });

export type CallEventType = CallEvent['type'];

/** A call event before the runtime numbers and stamps it. */
export type CallEventInput = CallEvent extends infer E
  ? E extends CallEvent
    ? Omit<E, keyof CallEventBase>
    : never
  : never;

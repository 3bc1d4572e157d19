import type {
  CallEvent,
  CallRecord,
  Notification,
  RuntimeInstance,
  Schedule,
  WebhookDelivery,
} from '@baton/contracts';

/** Record builders for the conformance suite and for tests: a valid record, with what a test names. */
export function makeCallRecord(overrides: Partial<CallRecord> & Pick<CallRecord, 'callId'>): CallRecord {
  return {
    sessionId: 's1',
    toolName: 'echo',
    args: {},
    status: 'queued',
    mode: 'inline',
    detached: false,
    attempt: 1,
    createdAt: 1_000,
    outputTail: '',
    ...overrides,
  };
}

export function makeNotification(
  overrides: Partial<Notification> & Pick<Notification, 'id' | 'callId'>,
): Notification {
  return {
    sessionId: 's1',
    toolName: 'echo',
    status: 'queued',
    outcome: 'succeeded',
    title: 'Task completed: Background tool: echo',
    body: 'Tool call:\necho({})\nReturn value:\nok',
    output: { status: 'completed', tool: 'echo', result: 'ok' },
    scheduling: 'when_idle',
    createdAt: 2_000,
    ...overrides,
  };
}

export function makeDelivery(
  overrides: Partial<WebhookDelivery> & Pick<WebhookDelivery, 'id' | 'notificationId' | 'callId'>,
): WebhookDelivery {
  return {
    sessionId: 's1',
    status: 'pending',
    body: '{"type":"call.ended","data":{"text":"a \\"quoted\\" line\\n"}}',
    attempts: 0,
    nextAt: 2_000,
    createdAt: 2_000,
    ...overrides,
  };
}

export function makeInstance(
  overrides: Partial<RuntimeInstance> & Pick<RuntimeInstance, 'id'>,
): RuntimeInstance {
  return {
    host: 'host-1',
    pid: 1234,
    boot: 'boot-1',
    startedAt: 1_000,
    heartbeatAt: 1_000,
    leaseMs: 5_000,
    protocol: 2,
    ...overrides,
  };
}

export function makeSchedule(overrides: Partial<Schedule> & Pick<Schedule, 'id'>): Schedule {
  return {
    sessionId: 's1',
    toolName: 'crawl',
    args: {},
    title: 'Nightly crawl',
    signalOnCompletion: true,
    cronExpression: '0 3 * * *',
    timezone: 'UTC',
    nextAt: 10_000,
    enabled: true,
    firings: 0,
    createdAt: 1_000,
    ...overrides,
  };
}

/** A `status` event of a call, numbered `seq`. */
export function statusEvent(callId: string, seq: number, sessionId = 's1'): CallEvent {
  return {
    type: 'status',
    callId,
    sessionId,
    toolName: 'echo',
    seq,
    at: 1_000 + seq,
    text: `step ${seq}`,
  };
}

import { CALL_STATUSES } from '@baton/contracts';
import { z } from 'zod';

/**
 * What the routes answer, for the OpenAPI document. Open objects: a field added later is not a
 * break, and a tool's output is whatever the tool returned.
 */

export const ApiError = z.object({
  error: z.object({
    code: z.string().describe('Stable: invalid_request, unauthorized, not_found, ...'),
    message: z.string(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Each problem of the request, by where it is'),
  }),
});

export const CallError = z.looseObject({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().optional(),
});

export const CallReply = z.looseObject({
  callId: z.string(),
  status: z.enum(['succeeded', 'failed', 'cancelled', 'timed_out', 'backgrounded']),
  output: z.unknown().describe('What the model sees'),
  error: CallError.optional(),
});

export const CallRecord = z.looseObject({
  callId: z.string(),
  sessionId: z.string(),
  toolName: z.string(),
  args: z.unknown(),
  status: z.enum(CALL_STATUSES),
  mode: z.enum(['inline', 'auto', 'background']),
  detached: z.boolean().describe('Answered `backgrounded`: its end queues a notification'),
  attempt: z.number().int(),
  approval: z.enum(['pending', 'approved', 'rejected']).optional(),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  durationMs: z.number().optional(),
  acknowledgement: z
    .unknown()
    .optional()
    .describe('What the caller was answered at once when the call went on in the background'),
  output: z.unknown().optional(),
  error: CallError.optional(),
  progress: z.looseObject({ current: z.number(), total: z.number().optional() }).optional(),
  trace: z
    .object({ traceparent: z.string(), tracestate: z.string().optional() })
    .optional()
    .describe("The caller's trace (W3C Trace Context)"),
});

export const CallPage = z.object({
  calls: z.array(CallRecord),
  nextCursor: z.string().optional().describe('Set when there are more: pass it as `cursor`'),
});

export const Notification = z.looseObject({
  id: z.string(),
  callId: z.string(),
  sessionId: z.string(),
  toolName: z.string(),
  status: z.enum(['queued', 'acknowledged']),
  outcome: z
    .enum(['succeeded', 'failed', 'cancelled', 'timed_out', 'running'])
    .describe(
      "The call's end, or `running` for an intermediate result (`ctx.update`) of a call that goes on",
    ),
  updateSeq: z.number().int().min(1).optional().describe("An update's number in its call"),
  title: z.string(),
  body: z.string().describe('The text for the model'),
  scheduling: z.enum(['interrupt', 'when_idle', 'silent']),
  createdAt: z.number(),
  acknowledgedAt: z.number().optional(),
});

export const WebhookDelivery = z.looseObject({
  id: z.string().describe('The webhook-id of every attempt'),
  notificationId: z.string(),
  callId: z.string(),
  sessionId: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  body: z.string().describe('The JSON body every attempt sends'),
  attempts: z.number(),
  nextAt: z.number().describe('When the next attempt is due, while pending'),
  createdAt: z.number(),
  lastAttempt: z
    .object({ at: z.number(), url: z.string(), status: z.number().optional(), error: z.string().optional() })
    .optional()
    .describe('Where the last attempt went, and the HTTP status it got or why it got none'),
  deliveredAt: z.number().optional(),
});

export const Health = z.object({
  ok: z.literal(true),
  instanceId: z.string().optional().describe('To an operator token, or on a server without tokens'),
  stats: z
    .looseObject({ active: z.number(), running: z.number(), queued: z.number() })
    .optional()
    .describe('To an operator token, or on a server without tokens'),
});

export const MachineGraph = z.looseObject({
  states: z.array(z.unknown()),
  transitions: z.array(z.unknown()),
});

export const ToolDeclarations = z.array(z.looseObject({}).describe("A tool, in the provider's format"));

/** `{ [done]: boolean }`: whether the request changed anything. */
export const SteerReceipt = z.object({ callId: z.string(), messageSeq: z.number().int().min(1) });

export const Done = (done: 'cancelled' | 'approved' | 'rejected' | 'acknowledged') =>
  z.object({ [done]: z.boolean() });

export const CallEventStream = z
  .string()
  .describe('Server-Sent Events: `event:` the event type, `id:` its position, `data:` the JSON call event');

import { CALL_STATUSES, idProblem } from '@baton/contracts';
import { z } from 'zod';
import {
  CallEventStream,
  CallPage,
  CallRecord,
  CallReply,
  Done,
  Health,
  MachineGraph,
  Notification,
  SteerReceipt,
  ToolDeclarations,
  WebhookDelivery,
} from './api-replies.js';

/**
 * The HTTP API, one entry per route: the app registers its routes from this table and validates
 * with its schemas, and the OpenAPI document is generated from it, so the two cannot drift apart.
 */
export interface Endpoint<
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
  Body extends z.ZodType = z.ZodType,
> {
  method: 'GET' | 'POST';
  /** Fastify's form: `/v1/calls/:id`. */
  url: string;
  summary: string;
  params?: Params;
  query?: Query;
  body?: Body;
  /** What a success answers (`schema`: its body); `text/event-stream` for streams. */
  response: {
    description: string;
    contentType?: 'application/json' | 'text/event-stream' | 'text/plain';
    schema?: z.ZodType;
  };
}

/** Every id follows the one rule of `idProblem`: at most 128 characters, well-formed, no control characters. */
const id = z.string().superRefine((value, context) => {
  const problem = idProblem(value);
  if (problem !== undefined) context.addIssue({ code: 'custom', message: `the id ${problem}` });
});
const IdParams = z.object({ id });
const StreamQuery = z.object({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Resume after this event id; the Last-Event-ID header wins over it.'),
});

/** A call of a tool; the OpenAPI document narrows it per tool (see openapi.ts). */
/** A tool's name, as a call names it: the words say "the tool name", not an id's. */
const toolName = z.string().superRefine((value, context) => {
  if (value === '') {
    context.addIssue({
      code: 'custom',
      message: 'the tool name must not be empty: give the name of one of GET /v1/tools',
    });
    return;
  }
  const problem = idProblem(value);
  if (problem !== undefined) context.addIssue({ code: 'custom', message: `the tool name ${problem}` });
});

/** The fields of a call request, as the API documents them. */
export const CallFields = z.object({
  name: toolName.describe('The tool'),
  args: z.unknown().optional().describe('The arguments; omitted means {}'),
  sessionId: id.describe('The conversation the call belongs to'),
  callId: id.optional().describe('Idempotency key: the same id twice is the same call'),
  notifyAfterMs: z
    .union([z.number().min(1), z.array(z.number().min(1)).min(1).max(10)])
    .optional()
    .describe(
      'When to tell the session the call still runs, in ms after it is made, if it is in the background then',
    ),
  messageId: id.optional(),
});

/**
 * A call request. `arguments` (MCP's word) is not one of its fields: a body that gives it is told
 * to say `args`, rather than have its tool run with no arguments.
 */
export const CallRequest = CallFields.extend({ arguments: z.unknown().optional() }).superRefine(
  (body, context) => {
    if (body.arguments === undefined) return;
    context.addIssue({
      code: 'custom',
      path: ['arguments'],
      message:
        body.args === undefined
          ? 'Baton takes the tool\'s arguments as "args" (MCP calls them "arguments"): rename the field'
          : 'give the arguments once, as "args"',
    });
  },
);

function endpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: Endpoint<P, Q, B>,
): Endpoint<P, Q, B> {
  return spec;
}

export const API = {
  health: endpoint({
    method: 'GET',
    url: '/healthz',
    summary: 'Whether the server is up; with the runtime counters to an operator',
    response: { description: 'ok', schema: Health },
  }),
  metrics: endpoint({
    method: 'GET',
    url: '/metrics',
    summary: 'Prometheus metrics: calls by state, ended calls, durations, queue depth',
    response: { description: 'Prometheus text format', contentType: 'text/plain', schema: z.string() },
  }),
  openapi: endpoint({
    method: 'GET',
    url: '/openapi.json',
    summary: 'This document',
    response: { description: 'OpenAPI 3.0', schema: z.looseObject({ openapi: z.string() }) },
  }),
  createCall: endpoint({
    method: 'POST',
    url: '/v1/calls',
    summary: 'Runs a tool call: the reply comes inline, or `backgrounded` at the inline budget',
    body: CallRequest,
    response: { description: 'The reply: callId, status, output, error', schema: CallReply },
  }),
  listCalls: endpoint({
    method: 'GET',
    url: '/v1/calls',
    summary: 'Lists calls, newest first',
    query: z.object({
      callId: id
        .optional()
        .describe('Only the call of this id: a page of one, or of none (a search that is not an id)'),
      sessionId: id.optional(),
      status: z.enum(CALL_STATUSES).optional(),
      tool: z.string().optional(),
      cursor: z
        .string()
        .regex(/^\d{1,15}$/, 'not a cursor a page gave')
        .optional()
        .describe('The nextCursor of the previous page'),
      limit: z.coerce.number().int().min(1).max(1_000).optional(),
    }),
    response: { description: '{ calls, nextCursor? }', schema: CallPage },
  }),
  getCall: endpoint({
    method: 'GET',
    url: '/v1/calls/:id',
    summary: 'One call record',
    params: IdParams,
    response: { description: 'The call record', schema: CallRecord },
  }),
  callEvents: endpoint({
    method: 'GET',
    url: '/v1/calls/:id/events',
    summary: "A call's events as Server-Sent Events; each event's id is its seq",
    params: IdParams,
    query: StreamQuery,
    response: {
      description: 'One JSON call event per message',
      contentType: 'text/event-stream',
      schema: CallEventStream,
    },
  }),
  sessionEvents: endpoint({
    method: 'GET',
    url: '/v1/sessions/:id/events',
    summary: "The events of a session's calls as Server-Sent Events, in stored order",
    params: IdParams,
    query: StreamQuery,
    response: {
      description: 'One JSON call event per message; ids are store positions',
      contentType: 'text/event-stream',
      schema: CallEventStream,
    },
  }),
  allEvents: endpoint({
    method: 'GET',
    url: '/v1/events',
    summary:
      "Every event of the tenant's calls as Server-Sent Events, live only: after a reconnect, list the calls again",
    response: {
      description: 'One JSON call event per message',
      contentType: 'text/event-stream',
      schema: CallEventStream,
    },
  }),
  machine: endpoint({
    method: 'GET',
    url: '/v1/machine',
    summary: 'The call machine: its states and transitions, read from its definition',
    response: { description: '{ states, transitions }', schema: MachineGraph },
  }),
  cancelCall: endpoint({
    method: 'POST',
    url: '/v1/calls/:id/cancel',
    summary: 'Cancels a queued or running call',
    params: IdParams,
    response: { description: '{ cancelled: boolean }', schema: Done('cancelled') },
  }),
  steerCall: endpoint({
    method: 'POST',
    url: '/v1/calls/:id/messages',
    summary:
      "Sends a running call a message (steering), checked by its tool's `messages` schema and stored before the answer; its tool reads each once, in order",
    params: IdParams,
    body: z
      .object({
        message: z.unknown().describe('What the tool takes (its `messages` schema)'),
        idempotencyKey: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe(
            'The sender’s key for this message (or the `Idempotency-Key` header): sent again with it, at any process, the message is stored once and answered with the same messageSeq',
          ),
      })
      .refine((body) => body.message !== undefined, { message: 'message is required', path: ['message'] }),
    response: { description: '{ callId, messageSeq }: its number in the call, from 1', schema: SteerReceipt },
  }),
  approveCall: endpoint({
    method: 'POST',
    url: '/v1/calls/:id/approve',
    summary: 'Lets a call that waits for approval run',
    params: IdParams,
    response: { description: '{ approved: boolean }', schema: Done('approved') },
  }),
  rejectCall: endpoint({
    method: 'POST',
    url: '/v1/calls/:id/reject',
    summary: 'Ends a call that waits for approval, with the reason shown to the model',
    params: IdParams,
    body: z.object({ reason: z.string().min(1) }),
    response: { description: '{ rejected: boolean }', schema: Done('rejected') },
  }),
  listNotifications: endpoint({
    method: 'GET',
    url: '/v1/notifications',
    summary:
      'Notifications of backgrounded calls (their ends, and updates and reminders while they run), oldest first, a page at a time',
    query: z.object({
      id: id.optional().describe("Only this one (a call's `notification` event names it)"),
      sessionId: id.optional(),
      status: z.enum(['queued', 'acknowledged']).optional(),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(1_000)
        .default(100)
        .describe('At most this many (default 100)'),
      after: id.optional().describe('The id of the last notification of the previous page'),
    }),
    response: { description: 'A list of notifications', schema: z.array(Notification) },
  }),
  ackNotification: endpoint({
    method: 'POST',
    url: '/v1/notifications/:id/ack',
    summary: "Acknowledges a notification once (with tenants, one of the tenant's queued notifications)",
    params: IdParams,
    response: { description: '{ acknowledged: boolean }', schema: Done('acknowledged') },
  }),
  listWebhookDeliveries: endpoint({
    method: 'GET',
    url: '/v1/webhooks/deliveries',
    summary:
      'Webhook deliveries of notifications, newest first: pending, delivered, or failed after their last try',
    query: z.object({
      status: z.enum(['pending', 'delivered', 'failed']).optional(),
      sessionId: id.optional(),
      callId: id.optional(),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(1_000)
        .default(100)
        .describe('At most this many (default 100)'),
    }),
    response: { description: 'A list of webhook deliveries', schema: z.array(WebhookDelivery) },
  }),
  listTools: endpoint({
    method: 'GET',
    url: '/v1/tools',
    summary: "The registered tools, declared in a provider's format",
    query: z.object({ format: z.enum(['openai', 'anthropic', 'gemini', 'mcp']).default('mcp') }),
    response: { description: 'A list of tool declarations', schema: ToolDeclarations },
  }),
} as const;

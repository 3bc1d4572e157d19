import {
  CALL_STATUSES,
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toMcpTool,
  toOpenAITool,
} from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';

const CallBody = z.object({
  name: z.string().min(1),
  args: z.unknown().optional(),
  sessionId: z.string().min(1),
  callId: z.string().min(1).optional(),
});
const ListQuery = z.object({
  sessionId: z.string().optional(),
  status: z.enum(CALL_STATUSES).optional(),
  tool: z.string().optional(),
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1_000).optional(),
});
const RejectBody = z.object({ reason: z.string().min(1) });
const NotificationsQuery = z.object({
  sessionId: z.string().optional(),
  status: z.enum(['queued', 'acknowledged']).optional(),
});
const ToolsQuery = z.object({ format: z.enum(['openai', 'anthropic', 'gemini', 'mcp']).default('mcp') });
const IdParams = z.object({ id: z.string().min(1) });

/** Parses a request part, or answers 400 naming each problem; undefined when it answered. */
function parse<T>(schema: z.ZodType<T>, value: unknown, reply: FastifyReply): T | undefined {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  void reply.code(400).send({
    error: {
      code: 'invalid_request',
      message: 'the request is not valid',
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    },
  });
  return undefined;
}

function notFound(reply: FastifyReply, what: string) {
  return reply.code(404).send({ error: { code: 'not_found', message: `${what} not found` } });
}

/** The HTTP API over a runtime. Bodies over 1 MiB get 413 (Fastify's body limit). */
export function buildApp(runtime: Runtime): FastifyInstance {
  const app = Fastify({ bodyLimit: 1024 * 1024 });

  app.get('/healthz', async () => ({ ok: true, instanceId: runtime.instanceId, stats: runtime.stats() }));

  app.post('/v1/calls', async (request, reply) => {
    const body = parse(CallBody, request.body, reply);
    if (!body) return reply;
    const { callId, ...rest } = body;
    return runtime.call({ ...rest, ...(callId ? { callId } : {}) });
  });

  app.get('/v1/calls', async (request, reply) => {
    const query = parse(ListQuery, request.query, reply);
    if (!query) return reply;
    const { tool, ...filter } = query;
    return runtime.list({ ...filter, ...(tool ? { toolName: tool } : {}) });
  });

  app.get('/v1/calls/:id', async (request, reply) => {
    const params = parse(IdParams, request.params, reply);
    if (!params) return reply;
    return (await runtime.get(params.id)) ?? notFound(reply, 'call');
  });

  for (const action of ['cancel', 'approve'] as const) {
    app.post(`/v1/calls/:id/${action}`, async (request, reply) => {
      const params = parse(IdParams, request.params, reply);
      if (!params) return reply;
      if (!(await runtime.get(params.id))) return notFound(reply, 'call');
      const done = action === 'cancel' ? await runtime.cancel(params.id) : await runtime.approve(params.id);
      return { [action === 'cancel' ? 'cancelled' : 'approved']: done };
    });
  }

  app.post('/v1/calls/:id/reject', async (request, reply) => {
    const params = parse(IdParams, request.params, reply);
    const body = params && parse(RejectBody, request.body, reply);
    if (!params || !body) return reply;
    if (!(await runtime.get(params.id))) return notFound(reply, 'call');
    return { rejected: await runtime.reject(params.id, body.reason) };
  });

  app.get('/v1/notifications', async (request, reply) => {
    const query = parse(NotificationsQuery, request.query, reply);
    if (!query) return reply;
    return runtime.notifications.list(query);
  });

  app.post('/v1/notifications/:id/ack', async (request, reply) => {
    const params = parse(IdParams, request.params, reply);
    if (!params) return reply;
    return { acknowledged: await runtime.notifications.ack(params.id) };
  });

  app.get('/v1/tools', async (request, reply) => {
    const query = parse(ToolsQuery, request.query, reply);
    if (!query) return reply;
    const tools = runtime.tools.definitions();
    switch (query.format) {
      case 'openai':
        return tools.map(toOpenAITool);
      case 'anthropic':
        return tools.map(toAnthropicTool);
      case 'gemini':
        return tools.map((tool) => toGeminiFunctionDeclaration(tool));
      case 'mcp':
        return tools.map((tool) => toMcpTool(tool));
    }
  });

  return app;
}

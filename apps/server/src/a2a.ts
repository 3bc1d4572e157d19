import type { IncomingMessage, ServerResponse } from 'node:http';
import type { User } from '@a2a-js/sdk/server';
import type { BatonA2aAgent } from '@baton/a2a';
import { type Caller, idProblem } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import type { TenantScope } from './tenancy.js';
import type { ToolScopes } from './tool-scopes.js';

/** The A2A agent the server is: what its card says of it. */
export interface A2aAgentOptions {
  /** Default `baton`. */
  name?: string;
  /** Default: the runtime's tools, as an A2A agent. */
  description?: string;
  /**
   * How many tenants' agents are kept at once (default 64): past it, the one used least recently
   * is closed. Each agent follows its tenant's notifications; a closed one's are kept in the store
   * and brought when the tenant's next request starts its agent again.
   */
  maxAgents?: number;
}

/** What the server knows of an A2A request's caller: the SDK hands it to the agent as its `User`. */
interface A2aCaller {
  scopeOf(request: FastifyRequest): TenantScope | undefined;
  toolScopes: Pick<ToolScopes, 'visible' | 'refusal'>;
  /** The server's URL as its clients reach it; undefined: each request's own (see `BatonPluginOptions.publicUrl`). */
  publicUrl: string | undefined;
}

/** The SDK's `User` for a caller the server let in: its tenant, and what its token's scopes allow. */
class ScopedUser implements User {
  constructor(readonly scope: TenantScope) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.scope.tenant ?? '';
  }
}

export const A2A_PATH = '/a2a';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

const A2A_SCHEMA = {
  summary: "A2A (Agent2Agent v1.0) JSON-RPC: the runtime's tools as the agent's skills, each task a call",
  externalDocs: { description: 'The A2A protocol', url: 'https://a2a-protocol.org/latest/specification/' },
  response: { 200: { description: 'A JSON-RPC response, or an SSE stream of them', type: 'object' } },
} as FastifySchema;

const CARD_SCHEMA = {
  summary: "The A2A agent card: the runtime's tools as skills, and where the agent answers",
  response: { 200: { description: 'The agent card (A2A v1.0)', type: 'object' } },
} as FastifySchema;

interface ServedAgent {
  agent: BatonA2aAgent;
  /** The SDK's own JSON-RPC handler (an Express app): the request as the SDK reads and answers it. */
  handle: (request: IncomingMessage, response: ServerResponse) => void;
}

/**
 * The runtime as an A2A agent (`@baton/a2a`): its card at `/.well-known/agent-card.json`, its
 * JSON-RPC endpoint (with SSE streams) at `/a2a`, behind the server's tokens like the REST API.
 * Each tenant has an agent of its own, its tasks under the tenant's prefix, so one tenant's tasks
 * never answer another. A caller sees the skills its token's scopes allow, and a task of a tool it
 * lacks the scope of is rejected, naming the scope. The SDK is loaded on the first A2A request.
 */
export async function mountA2a(
  app: FastifyInstance,
  runtime: Runtime,
  { scopeOf: scopeOfRequest, toolScopes, publicUrl }: A2aCaller,
  { name = 'baton', description = "The runtime's tools, as an A2A agent", maxAgents = 64 }: A2aAgentOptions,
): Promise<void> {
  // In the order they were last used: the first is the one to close when there are too many.
  const agents = new Map<string, Promise<ServedAgent>>();
  const callers = new WeakMap<IncomingMessage, TenantScope>();
  // The runtime decides what the caller may run (its scopes, its quota), as for every way in.
  const callerOf = (user: User | undefined): Caller => {
    if (!(user instanceof ScopedUser)) throw new Error('A2A: a request reached the agent without a tenant');
    return user.scope.caller;
  };
  const userOf = async (request: IncomingMessage): Promise<User> => {
    const scope = callers.get(request);
    if (scope === undefined) throw new Error('A2A: a request reached the agent without a tenant');
    return new ScopedUser(scope);
  };
  const serve = async (scope: TenantScope): Promise<ServedAgent> => {
    const [{ batonA2aAgent }, { default: express }, { jsonRpcHandler }] = await Promise.all([
      import('@baton/a2a'),
      import('express'),
      import('@a2a-js/sdk/server/express'),
    ]);
    const agent = batonA2aAgent(runtime, {
      // The card's URL is the one each request reached the server by (see the card's route).
      card: { name, description, version: '1.0.0', url: `${app.prefix}${A2A_PATH}` },
      prefix: scope.prefix,
      callerOf,
      onError: (error) => app.log.warn({ err: error, tenant: scope.tenant }, 'A2A'),
    });
    await agent.ready;
    const handler = express();
    handler.use(
      jsonRpcHandler({ requestHandler: agent.requestHandler, userBuilder: (request) => userOf(request) }),
    );
    return { agent, handle: handler };
  };
  const closed = (served: Promise<ServedAgent>) =>
    served.then(
      ({ agent }) => agent.close(),
      () => undefined, // a failed start was logged by the request it failed
    );
  const agentOf = (scope: TenantScope) => {
    let served = agents.get(scope.prefix);
    if (served === undefined) {
      served = serve(scope);
      const starting = served;
      // A failed start is not kept: the next request tries again.
      served.catch(() => agents.get(scope.prefix) === starting && agents.delete(scope.prefix));
    }
    agents.delete(scope.prefix);
    agents.set(scope.prefix, served);
    for (const [prefix, oldest] of agents) {
      if (agents.size <= maxAgents) break;
      agents.delete(prefix);
      void closed(oldest);
    }
    return served;
  };
  const scopeOf = (request: FastifyRequest) => {
    const scope = scopeOfRequest(request);
    if (scope === undefined) throw new Error('A2A: a request reached the agent without a tenant');
    return scope;
  };
  app.addHook('onClose', async () => {
    await Promise.all([...agents.values()].map(closed));
  });

  app.get(AGENT_CARD_PATH, { schema: CARD_SCHEMA }, async (request) => {
    const scope = scopeOf(request);
    const { agent } = await agentOf(scope);
    // Never the Host a request names unless no URL is configured: a card is what a client trusts.
    const origin = publicUrl?.replace(/\/$/, '') ?? `${request.protocol}://${request.host}`;
    const url = `${origin}${app.prefix}${A2A_PATH}`;
    const card = agent.agentCard;
    const visible = new Set(toolScopes.visible(scope, runtime.tools.definitions()).map((tool) => tool.name));
    return {
      ...card,
      supportedInterfaces: card.supportedInterfaces.map((each) => ({ ...each, url })),
      skills: card.skills.filter((skill) => visible.has(skill.id)),
    };
  });
  await app.register(async (endpoint) => {
    // The body is read by the server's own parser, under the limits every route has (size, depth,
    // keys, UTF-8), its refusals in the API's JSON; the SDK's handler is given it parsed, and its own
    // parser (Express's, 100 KB, an HTML error page) never reads a byte.
    endpoint.route({
      method: 'POST',
      url: A2A_PATH,
      schema: A2A_SCHEMA,
      handler: async (request, reply) => {
        const scope = scopeOf(request);
        // A request about a task of a tool the caller lacks the scope of (reading it, cancelling
        // it, answering its approval) is refused as a call of it would be: 403 with the challenge.
        const taskId = taskIdOf(request.body);
        const record = taskId === undefined ? undefined : await runtime.get(scope.inside(taskId));
        if (record && toolScopes.refusal(scope, runtime.tools.get(record.toolName), reply)) return reply;
        const { handle } = await agentOf(scope);
        callers.set(request.raw, scope);
        // Express's parser reads only a request that says it has a body: this one has none left.
        Object.assign(request.raw, { body: request.body ?? null });
        delete request.raw.headers['content-length'];
        delete request.raw.headers['transfer-encoding'];
        reply.hijack();
        // The SDK's router answers at its own root, wherever the server mounts it.
        request.raw.url = '/';
        handle(request.raw, reply.raw);
      },
    });
  });
}

/** The task a JSON-RPC request is about: `params.taskId` (its push configs), `params.id` (GetTask, CancelTask, SubscribeToTask), or the task its message continues. */
function taskIdOf(body: unknown): string | undefined {
  const params = (body as { params?: Record<string, unknown> } | null)?.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const message = params.message as { taskId?: unknown } | undefined;
  const id = params.taskId ?? params.id ?? message?.taskId;
  // One that no call could have (a NUL, a lone surrogate, too long) is left to the SDK: not found.
  return idProblem(id) === undefined ? (id as string) : undefined;
}

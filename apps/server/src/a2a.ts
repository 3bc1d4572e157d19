import type { BatonA2aAgent } from '@baton/a2a';
import type { Runtime } from '@baton/runtime';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import type { TenantScope } from './tenancy.js';

/** The A2A agent the server is: what its card says of it. */
export interface A2aAgentOptions {
  /** Default `baton`. */
  name?: string;
  /** Default: the runtime's tools, as an A2A agent. */
  description?: string;
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
  handle: (
    request: import('node:http').IncomingMessage,
    response: import('node:http').ServerResponse,
  ) => void;
}

/**
 * The runtime as an A2A agent (`@baton/a2a`): its card at `/.well-known/agent-card.json`, its
 * JSON-RPC endpoint (with SSE streams) at `/a2a`, behind the server's tokens like the REST API.
 * Each tenant has an agent of its own, its tasks under the tenant's prefix, so one tenant's tasks
 * never answer another. The SDK is loaded on the first A2A request.
 */
export async function mountA2a(
  app: FastifyInstance,
  runtime: Runtime,
  /** The tenant of a request the server's authentication let in. */
  scopeOfRequest: (request: FastifyRequest) => TenantScope | undefined,
  { name = 'baton', description = "The runtime's tools, as an A2A agent" }: A2aAgentOptions,
): Promise<void> {
  const agents = new Map<string, Promise<ServedAgent>>();
  const serve = async (scope: TenantScope): Promise<ServedAgent> => {
    const [{ batonA2aAgent }, { default: express }, { jsonRpcHandler, UserBuilder }] = await Promise.all([
      import('@baton/a2a'),
      import('express'),
      import('@a2a-js/sdk/server/express'),
    ]);
    const agent = batonA2aAgent(runtime, {
      // The card's URL is the one each request reached the server by (see the card's route).
      card: { name, description, version: '1.0.0', url: `${app.prefix}${A2A_PATH}` },
      prefix: scope.prefix,
      onError: (error) => app.log.warn({ err: error, tenant: scope.tenant }, 'A2A'),
    });
    await agent.ready;
    const handler = express();
    handler.use(
      jsonRpcHandler({ requestHandler: agent.requestHandler, userBuilder: UserBuilder.noAuthentication }),
    );
    return { agent, handle: handler };
  };
  const agentOf = (scope: TenantScope) => {
    let served = agents.get(scope.prefix);
    if (served === undefined) {
      served = serve(scope);
      // A failed start is not kept: the next request tries again.
      served.catch(() => agents.delete(scope.prefix));
      agents.set(scope.prefix, served);
    }
    return served;
  };
  const scopeOf = (request: FastifyRequest) => {
    const scope = scopeOfRequest(request);
    if (scope === undefined) throw new Error('A2A: a request reached the agent without a tenant');
    return scope;
  };
  app.addHook('onClose', async () => {
    for (const served of agents.values()) (await served.catch(() => undefined))?.agent.close();
  });

  app.get(AGENT_CARD_PATH, { schema: CARD_SCHEMA }, async (request) => {
    const { agent } = await agentOf(scopeOf(request));
    const url = `${request.protocol}://${request.host}${app.prefix}${A2A_PATH}`;
    return {
      ...agent.agentCard,
      supportedInterfaces: agent.agentCard.supportedInterfaces.map((each) => ({ ...each, url })),
    };
  });
  await app.register(async (endpoint) => {
    // The body stays unread for the SDK's handler: it parses it and answers a malformed one in JSON-RPC.
    endpoint.removeAllContentTypeParsers();
    endpoint.addContentTypeParser('*', (_request, _payload, done) => done(null));
    endpoint.route({
      method: 'POST',
      url: A2A_PATH,
      schema: A2A_SCHEMA,
      handler: async (request, reply) => {
        const { handle } = await agentOf(scopeOf(request));
        reply.hijack();
        // The SDK's router answers at its own root, wherever the server mounts it.
        request.raw.url = '/';
        handle(request.raw, reply.raw);
      },
    });
  });
}

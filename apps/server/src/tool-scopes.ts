import type { AnyTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FastifyReply } from 'fastify';
import { fail } from './api-errors.js';
import type { OAuthResourceServer } from './oauth.js';
import type { TenantScope } from './tenancy.js';

/**
 * The runtime's decision on a caller and a tool (`runtime.access`), in HTTP's words: the tools a
 * caller is shown, and the 403 `insufficient_scope` with the `WWW-Authenticate` that asks for the
 * scope (step-up, as MCP clients read it). The server decides nothing itself.
 */
export class ToolScopes {
  readonly #access: Runtime['access'];
  readonly #oauth: Pick<OAuthResourceServer, 'insufficientScope'> | undefined;

  constructor(access: Runtime['access'], oauth: Pick<OAuthResourceServer, 'insufficientScope'> | undefined) {
    this.#access = access;
    this.#oauth = oauth;
  }

  /** The tools the caller may see. */
  visible<T extends Pick<AnyTool, 'name' | 'scope'>>(scope: TenantScope, tools: readonly T[]): T[] {
    return this.#access.visible(scope.caller, tools);
  }

  /** The `WWW-Authenticate` that asks for a scope. */
  challenge(needed: string): string {
    return this.#oauth?.insufficientScope(needed) ?? `Bearer error="insufficient_scope", scope="${needed}"`;
  }

  /** The scope the caller lacks to call the tool, and the `WWW-Authenticate` that asks for it; or undefined. */
  lacks(scope: TenantScope, tool: Pick<AnyTool, 'name' | 'scope'> | undefined) {
    const needed = this.#access.lacks(scope.caller, tool);
    return needed === undefined ? undefined : { scope: needed, challenge: this.challenge(needed) };
  }

  /** Answers 403 for a scope the caller lacks (the runtime's refusal, or asked of it here). */
  forbid(reply: FastifyReply, toolName: string | undefined, needed: string) {
    reply.header('www-authenticate', this.challenge(needed));
    return fail(reply, 403, 'insufficient_scope', `calling ${toolName} needs the scope ${needed}`, {
      scope: needed,
    });
  }

  /** Refuses a call the caller lacks the tool's scope for (the reply sent), or gives undefined. */
  refusal(scope: TenantScope, tool: Pick<AnyTool, 'name' | 'scope'> | undefined, reply: FastifyReply) {
    const lacking = this.lacks(scope, tool);
    return lacking && this.forbid(reply, tool?.name, lacking.scope);
  }
}

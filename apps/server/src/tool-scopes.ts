import type { AnyTool } from '@baton/contracts';
import type { FastifyReply } from 'fastify';
import { fail } from './api-errors.js';
import type { OAuthResourceServer } from './oauth.js';
import type { TenantScope } from './tenancy.js';

/**
 * The OAuth scope each tool needs: the server's mapping (for tools it did not write), else the
 * tool's own `scope`. A caller sees and calls only the tools its token's scopes allow; a call of
 * one it lacks the scope of is refused 403 `insufficient_scope`, naming the scope to ask for.
 */
export class ToolScopes {
  readonly #mapping: Readonly<Record<string, string>>;
  readonly #oauth: Pick<OAuthResourceServer, 'insufficientScope'> | undefined;

  constructor(
    oauth: Pick<OAuthResourceServer, 'insufficientScope'> | undefined,
    mapping: Readonly<Record<string, string>> = {},
  ) {
    this.#oauth = oauth;
    this.#mapping = mapping;
  }

  of(tool: Pick<AnyTool, 'name' | 'scope'>): string | undefined {
    return Object.hasOwn(this.#mapping, tool.name) ? this.#mapping[tool.name] : tool.scope;
  }

  /** The tools the caller may see. */
  visible<T extends Pick<AnyTool, 'name' | 'scope'>>(scope: TenantScope, tools: readonly T[]): T[] {
    return tools.filter((tool) => scope.holds(this.of(tool)));
  }

  /** The scope the caller lacks to call the tool, and the `WWW-Authenticate` that asks for it; or undefined. */
  lacks(scope: TenantScope, tool: Pick<AnyTool, 'name' | 'scope'> | undefined) {
    const needed = tool && this.of(tool);
    if (needed === undefined || scope.holds(needed) || !this.#oauth) return undefined;
    return { scope: needed, challenge: this.#oauth.insufficientScope(needed) };
  }

  /** Refuses a call the caller lacks the tool's scope for (the reply sent), or gives undefined. */
  refusal(scope: TenantScope, tool: Pick<AnyTool, 'name' | 'scope'> | undefined, reply: FastifyReply) {
    const lacking = this.lacks(scope, tool);
    if (!lacking) return undefined;
    reply.header('www-authenticate', lacking.challenge);
    return fail(reply, 403, 'insufficient_scope', `calling ${tool?.name} needs the scope ${lacking.scope}`, {
      scope: lacking.scope,
    });
  }
}

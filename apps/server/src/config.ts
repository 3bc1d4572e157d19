import { z } from 'zod';

/** The server's configuration, from environment variables; a bad value stops the start, naming it. */
const CONFIG = z.object({
  BATON_HOST: z.string().min(1).default('127.0.0.1'),
  BATON_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  BATON_STORE: z.string().min(1).default('./.baton/baton.db'),
  BATON_INLINE_BUDGET_MS: z.coerce.number().int().positive().default(300),
});

export interface ServerConfig {
  host: string;
  port: number;
  storePath: string;
  inlineBudgetMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv): ServerConfig {
  const parsed = CONFIG.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`bad configuration: ${problems.join('; ')}`);
  }
  const { BATON_HOST, BATON_PORT, BATON_STORE, BATON_INLINE_BUDGET_MS } = parsed.data;
  return {
    host: BATON_HOST,
    port: BATON_PORT,
    storePath: BATON_STORE,
    inlineBudgetMs: BATON_INLINE_BUDGET_MS,
  };
}

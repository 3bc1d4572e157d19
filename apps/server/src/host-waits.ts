import type { AnyTool, ExecutionMode } from '@baton/contracts';

/**
 * How long MCP hosts wait for a tool's answer before they give up on the request: the MCP SDKs'
 * default request timeout, which Gemini CLI and Claude Code use, and Codex's `tool_timeout_sec`.
 */
export const HOSTS_WAIT_MS = 60_000;

/**
 * What `baton serve` warns of at its start: the `auto` tools whose inline budget (their own, or
 * the server's) is longer than hosts wait. A call of theirs still inline when the host gives up goes on
 * in the background, and its result then comes only through `wait_background`, a task or a wake:
 * a budget under the hosts' wait answers the model in time with an acknowledgement instead.
 */
export function budgetsPastHostsWait(
  { inlineBudgetMs, defaultMode }: { inlineBudgetMs: number; defaultMode: ExecutionMode },
  tools: readonly Pick<AnyTool, 'name' | 'execution'>[],
): string | undefined {
  const past = tools
    // Only an `auto` call has a budget: an inline one waits for its end, a background one never does.
    .filter((tool) => (tool.execution.mode ?? defaultMode) === 'auto')
    .map((tool) => ({ name: tool.name, budgetMs: tool.execution.inlineBudgetMs ?? inlineBudgetMs }))
    .filter(({ budgetMs }) => budgetMs > HOSTS_WAIT_MS);
  if (past.length === 0) return undefined;
  const named = past.map(({ name, budgetMs }) => `${name} (${budgetMs} ms)`).join(', ');
  return `the inline budget of ${named} is longer than MCP hosts wait for a tool (${HOSTS_WAIT_MS / 1000} s by default: the MCP SDKs, Codex, Gemini CLI, Claude Code): a call still inline then is given up by its host and goes on in the background, its result told only through wait_background or a task. Keep it under ${HOSTS_WAIT_MS} ms (BATON_INLINE_BUDGET_MS, inlineBudgetMs in the config file, or the tool's execution.inlineBudgetMs)`;
}

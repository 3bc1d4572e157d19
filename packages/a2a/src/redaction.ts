import type { Message, Task } from '@a2a-js/sdk';
import { type ArgPath, redactedArgs } from '@baton/contracts';

/** The tools' secret arguments, by name (`tool.secretArgs`). */
export type SecretArgsOf = { get(name: string): { readonly secretArgs?: readonly ArgPath[] } | undefined };

/**
 * A message with the secret arguments of the skill it calls shown `[redacted]` (a `writeOnly`
 * field of the tool's input): the task's history is what a client reads back (`SendMessage`'s
 * answer, `GetTask`, `ListTasks`), and a secret given is never read back. The same message when it
 * carries none.
 */
export function redactedMessage(message: Message, tools: SecretArgsOf): Message {
  let changed = false;
  const parts = message.parts.map((part) => {
    if (part.content?.$case !== 'data') return part;
    const value = part.content.value as Record<string, unknown> | null;
    if (value === null || typeof value !== 'object') return part;
    const named = typeof value.skill === 'string';
    const skill = named ? (value.skill as string) : message.metadata?.skill;
    const paths = typeof skill === 'string' ? (tools.get(skill)?.secretArgs ?? []) : [];
    if (paths.length === 0) return part;
    changed = true;
    const shown = named
      ? {
          ...value,
          ...('arguments' in value ? { arguments: redactedArgs(value.arguments, paths) } : {}),
          ...('args' in value ? { args: redactedArgs(value.args, paths) } : {}),
        }
      : redactedArgs(value, paths);
    return { ...part, content: { $case: 'data' as const, value: shown as Record<string, unknown> } };
  });
  return changed ? { ...message, parts } : message;
}

/** A task with every message of its history redacted (see `redactedMessage`). */
export function redactedTask(task: Task, tools: SecretArgsOf): Task {
  if (!task.history?.length) return task;
  return { ...task, history: task.history.map((message) => redactedMessage(message, tools)) };
}

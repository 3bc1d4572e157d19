import type { AnyStateMachine } from 'xstate';

export interface MachineGraph {
  /** The machine's top-level states, in the order they are defined. */
  states: Array<{ id: string; final: boolean; initial: boolean; description?: string }>;
  /** One per transition to another state; a guard names the condition under which it is taken. */
  transitions: Array<{ from: string; to: string; event: string; guard?: string }>;
}

/**
 * The states and transitions of a flat machine, read from the machine itself (so a drawing of it
 * cannot drift from what runs). Self-transitions that only run actions are left out.
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root;
  const initial = root.initial.target[0]?.key;
  const states = Object.values(root.states).map((node) => ({
    id: node.key,
    final: node.type === 'final',
    initial: node.key === initial,
    ...(node.description !== undefined ? { description: node.description } : {}),
  }));
  const transitions = Object.values(root.states).flatMap((node) =>
    [...node.transitions.values()].flat().flatMap((transition) =>
      (transition.target ?? []).map((target) => {
        const guard = transition.guard;
        const guardName = typeof guard === 'string' ? guard : undefined;
        return {
          from: node.key,
          to: target.key,
          event: transition.eventType,
          ...(guardName !== undefined ? { guard: guardName } : {}),
        };
      }),
    ),
  );
  return { states, transitions };
}

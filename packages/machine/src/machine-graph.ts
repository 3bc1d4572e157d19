import type { AnyStateMachine, AnyStateNode } from 'xstate';

export interface MachineGraph {
  /** The machine's top-level states, in the order they are defined, with the states inside each. */
  states: Array<{
    id: string;
    final: boolean;
    initial: boolean;
    description?: string;
    children?: Array<{ id: string; initial: boolean; description?: string }>;
  }>;
  /** One per transition to another top-level state; a guard names the condition under which it is taken. */
  transitions: Array<{ from: string; to: string; event: string; guard?: string }>;
}

/** The top-level state a node belongs to. */
function topOf(node: AnyStateNode): AnyStateNode {
  let top = node;
  while (top.parent?.parent) top = top.parent;
  return top;
}

function descendants(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...descendants(child)]);
}

/**
 * The states and transitions of the machine, read from the machine itself (so a drawing of it
 * cannot drift from what runs). A transition declared inside a state (a queued call's START) is
 * drawn from its top-level state; those that stay within one top-level state are left out.
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root;
  const initial = root.initial.target[0]?.key;
  const states = Object.values(root.states).map((node) => {
    const first = node.type === 'compound' ? node.initial.target[0]?.key : undefined;
    const children = Object.values(node.states).map((child) => ({
      id: child.key,
      initial: child.key === first,
      ...(child.description !== undefined ? { description: child.description } : {}),
    }));
    return {
      id: node.key,
      final: node.type === 'final',
      initial: node.key === initial,
      ...(node.description !== undefined ? { description: node.description } : {}),
      ...(children.length > 0 ? { children } : {}),
    };
  });
  const seen = new Set<string>();
  const transitions = descendants(root).flatMap((node) =>
    [...node.transitions.values()].flat().flatMap((transition) =>
      (transition.target ?? []).flatMap((target) => {
        const from = topOf(node).key;
        const to = topOf(target).key;
        const guard = typeof transition.guard === 'string' ? transition.guard : undefined;
        const key = `${from}|${to}|${transition.eventType}|${guard}`;
        if (from === to || seen.has(key)) return [];
        seen.add(key);
        return [{ from, to, event: transition.eventType, ...(guard !== undefined ? { guard } : {}) }];
      }),
    ),
  );
  return { states, transitions };
}

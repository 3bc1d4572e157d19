import type { CallStatus } from '@baton/contracts';
import type { MachineGraph } from '@baton/machine';
import dagre, { type Edge } from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';

const NODE = { width: 136, height: 50 };
/** Each state inside a top-level state adds a row this tall to its box. */
const CHILD_ROW = 20;

const heightOf = (state: MachineGraph['states'][number]) =>
  NODE.height + (state.children?.length ?? 0) * CHILD_ROW;

interface Laid {
  width: number;
  height: number;
  nodes: Array<MachineGraph['states'][number] & { x: number; y: number; height: number }>;
  edges: Array<{ key: string; label: string; points: Array<{ x: number; y: number }>; x: number; y: number }>;
}

/** Lays the machine out with dagre: left to right, one edge per pair of states, its events as the label. */
function layOut(graph: MachineGraph): Laid {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 26, ranksep: 90, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const state of graph.states) g.setNode(state.id, { width: NODE.width, height: heightOf(state) });
  const labels = new Map<string, string[]>();
  for (const { from, to, event } of graph.transitions) {
    const key = `${from}->${to}`;
    labels.set(key, [...(labels.get(key) ?? []), event]);
  }
  for (const [key, events] of labels) {
    const [from = '', to = ''] = key.split('->');
    const label = events.join(' / ');
    g.setEdge(from, to, { label, width: label.length * 6.5, height: 14, labelpos: 'c' });
  }
  dagre.layout(g);
  const size = g.graph();
  return {
    width: size.width ?? 0,
    height: size.height ?? 0,
    nodes: graph.states.map((state) => {
      const node = g.node(state.id);
      return { ...state, x: node.x, y: node.y, height: heightOf(state) };
    }),
    edges: g.edges().map((edge: Edge) => {
      const laid = g.edge(edge);
      const key = `${edge.v}->${edge.w}`;
      return {
        key,
        label: labels.get(key)?.join(' / ') ?? '',
        points: laid.points ?? [],
        x: laid.x ?? 0,
        y: laid.y ?? 0,
      };
    }),
  };
}

export interface MachineDiagramProps {
  graph: MachineGraph;
  /** Calls in each state now. */
  counts: Partial<Record<CallStatus, number>>;
  /** The open call's path through the machine, highlighted; its last state is where it is. */
  path?: readonly CallStatus[];
  pathEdges?: ReadonlySet<string>;
  /** The state the open call is in within its top-level state (`awaiting_approval`, `retry_wait`...). */
  substate?: string | undefined;
}

/** The call machine drawn from its own definition, with the number of calls in each state. */
export function MachineDiagram({
  graph,
  counts,
  path = [],
  pathEdges = new Set(),
  substate,
}: MachineDiagramProps) {
  const laid = useMemo(() => layOut(graph), [graph]);
  const current = path.at(-1);
  return (
    <svg
      class="machine"
      viewBox={`0 0 ${laid.width} ${laid.height}`}
      role="img"
      aria-label="The call machine"
    >
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="9"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" />
        </marker>
      </defs>
      {laid.edges.map((edge) => (
        <g key={edge.key} class={`edge${pathEdges.has(edge.key) ? ' on-path' : ''}`} data-edge={edge.key}>
          <polyline points={edge.points.map(({ x, y }) => `${x},${y}`).join(' ')} marker-end="url(#arrow)" />
          <text x={edge.x} y={edge.y} text-anchor="middle" dominant-baseline="middle">
            {edge.label}
          </text>
        </g>
      ))}
      {laid.nodes.map((node) => {
        const count = counts[node.id as CallStatus] ?? 0;
        const classes = [
          'state',
          node.final ? 'final' : '',
          path.includes(node.id as CallStatus) ? 'visited' : '',
          node.id === current ? 'current' : '',
        ]
          .filter(Boolean)
          .join(' ');
        return (
          <g key={node.id} class={classes} data-state={node.id} data-count={count}>
            <title>{node.description ?? node.id}</title>
            <rect
              x={node.x - NODE.width / 2}
              y={node.y - node.height / 2}
              width={NODE.width}
              height={node.height}
              rx={node.final ? 6 : 14}
            />
            <text x={node.x} y={node.y - node.height / 2 + 19} text-anchor="middle" class="name">
              {node.initial ? '▸ ' : ''}
              {node.id}
            </text>
            <text x={node.x} y={node.y - node.height / 2 + 38} text-anchor="middle" class="count">
              {count} {count === 1 ? 'call' : 'calls'}
            </text>
            {node.children?.map((child, i) => (
              <g
                key={child.id}
                class={`substate${node.id === current && child.id === substate ? ' current' : ''}`}
                data-substate={`${node.id}.${child.id}`}
              >
                <title>{child.description ?? child.id}</title>
                <rect
                  x={node.x - NODE.width / 2 + 10}
                  y={node.y - node.height / 2 + NODE.height + i * CHILD_ROW - 4}
                  width={NODE.width - 20}
                  height={CHILD_ROW - 4}
                  rx={8}
                />
                <text
                  x={node.x}
                  y={node.y - node.height / 2 + NODE.height + i * CHILD_ROW + 8}
                  text-anchor="middle"
                  class="child"
                >
                  {child.initial ? '▸ ' : ''}
                  {child.id.replace('_', ' ')}
                </text>
              </g>
            ))}
          </g>
        );
      })}
    </svg>
  );
}

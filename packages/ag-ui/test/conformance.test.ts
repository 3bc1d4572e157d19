import type { Message, RunAgentInput } from '@ag-ui/core';
import type { Runtime } from '@baton/runtime';
import type { BridgeConversation, BridgeDriver, BridgeTurn } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import { type AgUiModel, type AgUiRunEvent, batonAgUiRun } from '../src/index.js';

/** A thread's messages as the model is given them, as text. */
const inputOf = (messages: readonly Message[]) => JSON.stringify(messages);

/** The thread a front end keeps, across the runtimes of a restart (AG-UI's history is the front end's). */
let kept: Message[] = [];

/**
 * AG-UI runs of one thread, played in process (the run is a generator: the driver holds it right
 * after the tool call was answered, for `between`), with the suite's model. The front end keeps
 * the thread: each run's messages, as the model last saw them.
 */
function threadOf(runtime: Runtime, sessionId: string, history: Message[]): BridgeConversation {
  const threadId = 'thread-1';
  let runs = 0;
  let paused: { callId: string; interruptId: string } | undefined;
  const play = async (turn: BridgeTurn, resume?: RunAgentInput['resume']) => {
    const inputs: string[] = [];
    let thread: readonly Message[] = history;
    let step = 0;
    const model: AgUiModel = async ({ messages }) => {
      inputs.push(inputOf(messages));
      thread = messages;
      if (turn.fails) throw new Error('the model API failed');
      if (step++ === 0 && turn.call) {
        const { callId, tool, args } = turn.call;
        return { toolCalls: [{ id: callId, name: tool, args }] };
      }
      return { text: turn.answer ?? 'ok' };
    };
    const stop = new AbortController();
    if (turn.call && turn.cancels) {
      void whenStarted(runtime, `${threadId}/${turn.call.callId}`).then(() => stop.abort());
    }
    const input: RunAgentInput = {
      threadId,
      runId: `run-${++runs}`,
      state: {},
      messages: resume ? [...history] : [...history, { id: `user-${runs}`, role: 'user', content: 'Go on.' }],
      tools: [],
      context: [],
      forwardedProps: {},
      ...(resume ? { resume } : {}),
    };
    const events: AgUiRunEvent[] = [];
    for await (const event of batonAgUiRun(runtime, input, {
      model,
      sessionOf: () => sessionId,
      signal: stop.signal,
    })) {
      events.push(event);
      if (event.type === 'TOOL_CALL_RESULT' && turn.call && event.toolCallId === turn.call.callId) {
        await turn.between?.();
      }
    }
    const failed = events.find((event) => event.type === 'RUN_ERROR');
    if (failed) throw new Error(`the run failed: ${JSON.stringify(failed)}`);
    const finished = events.find((event) => event.type === 'RUN_FINISHED');
    const interrupt = finished && 'outcome' in finished ? finished.outcome : undefined;
    paused =
      interrupt && typeof interrupt === 'object' && 'interrupts' in interrupt && turn.call
        ? { callId: turn.call.callId, interruptId: String(interrupt.interrupts[0]?.id) }
        : undefined;
    // The model's last input holds the run's messages, its answer after them.
    history = [...thread];
    kept = history;
    return { inputs, paused: paused !== undefined };
  };
  return {
    async turn(turn) {
      const { inputs, paused: pausedNow } = await play(turn);
      const [atStart = '', afterCall] = inputs;
      const told = turn.call && !pausedNow ? afterCall : undefined;
      return { atStart, ...(afterCall ? { afterCall } : {}), ...(told ? { told } : {}) };
    },
    async decide(approved) {
      if (!paused) throw new Error('no run paused for an approval');
      const { interruptId } = paused;
      const { inputs } = await play({}, [{ interruptId, status: 'resolved', payload: { approved } }]);
      return inputs[0] ?? '';
    },
    stored: async () => inputOf(history),
    batonCallId: (callId) => `${threadId}/${callId}`,
    async close() {},
  };
}

const driver: BridgeDriver = {
  delivery: 'pull',
  // An approval finishes the run with an interrupt; the next run resumes it with the decision.
  approvals: 'pause',
  async open(runtime, sessionId) {
    kept = [];
    return threadOf(runtime, sessionId, []);
  },
  reopen: async (runtime, sessionId) => threadOf(runtime, sessionId, kept),
};

describeBridgeConformance('ag-ui', driver, bridgeConformanceOptions);

import type { BridgeConversation, BridgeDriver } from '@baton/runtime/bridge/testing';
import { describeBridgeConformance } from '@baton/runtime/bridge/testing';
import { whenStarted } from '@baton/runtime/testing';
import { bridgeConformanceOptions } from '@baton/test-support';
import {
  Agent,
  type AgentInputItem,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  Usage,
} from '@openai/agents';
import { batonAgentNotifications, batonAgentTools, batonApprovals } from '../src/index.js';

const say = (text: string): AgentOutputItem => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});

/** A model of the test's own: each turn's script, and every request it was given. */
class ScriptedModel implements Model {
  script: AgentOutputItem[][] = [];
  requests: ModelRequest[] = [];
  failing = false;
  answer = 'ok';
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    if (this.failing) throw new Error('the model API failed');
    return { usage: new Usage(), output: this.script.shift() ?? [say(this.answer)] };
  }
  // biome-ignore lint/correctness/useYield: the loop under test never streams.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}

/** The Agents SDK's own loop (`Runner.run`), on a scripted model, with the bridge's tools and notifications. */
const driver: BridgeDriver = {
  delivery: 'pull',
  approvals: 'pause',
  // The SDK tells the model of a rejection itself.
  rejectedWords: 'Tool execution was not approved.',
  async open(runtime, sessionId): Promise<BridgeConversation> {
    const model = new ScriptedModel();
    const agent = new Agent({
      name: 'assistant',
      instructions: 'Help.',
      model,
      tools: batonAgentTools(runtime, { sessionId }),
    });
    const notifications = batonAgentNotifications(runtime, { sessionId });
    let between: (() => Promise<void>) | undefined;
    const runner = new Runner({
      tracingDisabled: true,
      callModelInputFilter: async (args) => {
        // The second model call of a run comes after the tool results: a result may end before it.
        if (model.requests.length === 1) await between?.();
        return notifications.callModelInputFilter(args);
      },
    });
    let history: AgentInputItem[] = [];
    /** The run paused for an approval: resumes it with the decision. */
    let resume: ((approved: boolean) => Promise<AgentInputItem[]>) | undefined;
    const shown = () => model.requests.map((request) => JSON.stringify(request.input));
    const toldIn = (requests: string[]) => requests[1];
    return {
      async turn(turn) {
        model.requests = [];
        model.failing = turn.fails === true;
        model.answer = turn.answer ?? 'ok';
        between = turn.between;
        resume = undefined;
        const { call } = turn;
        model.script = call
          ? [
              [
                {
                  type: 'function_call',
                  callId: call.callId,
                  name: call.tool,
                  arguments: JSON.stringify(call.args),
                  status: 'completed',
                },
              ],
            ]
          : [];
        const stop = new AbortController();
        if (call && turn.cancels) {
          void whenStarted(runtime, call.callId).then(() => stop.abort());
        }
        const input: AgentInputItem[] = [
          ...history,
          ...(await notifications.turnInput()),
          { role: 'user', content: 'Go on.' },
        ];
        try {
          const result = await runner.run(agent, input, { signal: stop.signal });
          const [item] = result.interruptions ?? [];
          if (item) {
            resume = async (approved) => {
              const approvals = batonApprovals(runtime);
              if (approved) await approvals.approve(result.state, item);
              else await approvals.reject(result.state, item);
              return (await runner.run(agent, result.state)).history;
            };
          } else history = await notifications.history(result.history);
        } catch (error) {
          if (!stop.signal.aborted) throw error;
          history = input;
        }
        const [atStart = '', afterCall] = shown();
        const told = toldIn(shown());
        return { atStart, ...(afterCall ? { afterCall } : {}), ...(told && !resume ? { told } : {}) };
      },
      async decide(approved) {
        if (!resume) throw new Error('no run paused for an approval');
        model.requests = [];
        const resumed = await resume(approved);
        resume = undefined;
        history = await notifications.history(resumed);
        return shown()[0] ?? '';
      },
      // The application keeps the run's history, as the README says.
      stored: async () => JSON.stringify(history),
      async close() {},
    };
  },
};

describeBridgeConformance('openai-agents', driver, bridgeConformanceOptions);

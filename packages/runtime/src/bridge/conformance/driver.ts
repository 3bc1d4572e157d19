import type { Runtime } from '../../runtime-api.js';

/** One turn of the model, as the suite asks a bridge's driver to play it. */
export interface BridgeTurn {
  /** The tool the model calls at its first model call, under the framework's own call id. */
  call?: { tool: string; args: Record<string, unknown>; callId: string };
  /** Runs once the tool call was answered, before the turn goes on (a result ends mid-run). */
  between?: () => Promise<void>;
  /**
   * Pull: the turn's first model call fails (throws) after it was given its results. Push: the
   * next put into the conversation fails (the send throws).
   */
  fails?: boolean;
  /** The framework cancels the tool call once it has started (its run's signal, the platform's cancellation). */
  cancels?: boolean;
  /** What the model says at the turn's last model call (pull): `ok` when absent. */
  answer?: string;
}

/** What the model had in one turn. */
export interface TurnResult {
  /** What the model was told of its tool call: its result, the acknowledgement, or the error. Absent when the run paused. */
  told?: string;
  /** Pull: the first model call's whole input, as text. Push: all that was put into the conversation when the turn began. */
  atStart: string;
  /**
   * Pull: the input of the model call after the tool call (absent without one). Push: all that
   * was put into the conversation once `between` ran, mid-turn.
   */
  afterCall?: string;
}

/** A conversation of one Baton session, in the bridge's framework, driven by the suite. */
export interface BridgeConversation {
  /** Plays a turn; rejects when the turn failed (`fails`). Push: the turn is over (idle) when it resolves. */
  turn(turn: BridgeTurn): Promise<TurnResult>;
  /**
   * The framework's own stored history, as text: what the next turn starts from (LangGraph's
   * thread state, an ADK session, Claude Code's transcript, the conversation a live session was
   * sent; for a loop that keeps no history of its own, the one the application keeps as its README says).
   */
  stored(): Promise<string>;
  /** For `approvals: 'pause'`: resumes the paused run with the user's decision; resolves with what the model was told. */
  decide?(approved: boolean): Promise<string>;
  /**
   * The Baton call id of a call the model made under `callId`, where the bridge names its calls
   * itself (ACP prefixes its session's id). The same id when absent.
   */
  batonCallId?(callId: string): string;
  close(): Promise<void>;
}

/**
 * What a bridge gives the suite: a small adapter from its framework to a conversation. Each
 * bridge's test makes one, with the framework's own test double for the model.
 */
export interface BridgeDriver {
  /** The bridge's delivery: the loop asks at each step (`pull`), or the kit puts results into a live conversation (`push`). */
  delivery: 'pull' | 'push';
  /**
   * How a tool that needs approval goes: the run pauses for the user's decision (`pause`); the
   * framework asked its permission before the call (`permission`, the call runs approved); or, in
   * a framework with no confirmation step, the call is acknowledged and waits, recorded, for a
   * decision from outside (`acknowledged`: the server's API, the inspector, `runtime.inputs`).
   */
  approvals: 'pause' | 'permission' | 'acknowledged';
  /**
   * What the framework tells the model of a call the user rejected, where it says so in its own
   * words (the OpenAI Agents SDK's "Tool execution was not approved."). Default: Baton's ("The tool
   * call was rejected: …").
   */
  rejectedWords?: string;
  /** Opens a conversation of `sessionId` on `runtime` (from the bridge's own tools for it). */
  open(runtime: Runtime, sessionId: string): Promise<BridgeConversation>;
  /**
   * Opens the conversation last opened again, on another runtime (a restarted process): with the
   * history the framework keeps in a store of its own (an ADK session service), where it has one.
   * `open` when absent.
   */
  reopen?(runtime: Runtime, sessionId: string): Promise<BridgeConversation>;
}

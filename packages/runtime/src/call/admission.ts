import type { LiveCall } from './live-call.js';

/** The calls of one session: those waiting, oldest first, and what of it runs now. */
interface SessionLane {
  waiting: Map<string, LiveCall>;
  running: number;
  runningExclusive: boolean;
  /** The tenant the session belongs to, when the runtime knows tenants. */
  tenant: string | undefined;
}

/** How many slots one session, and one tenant, may hold at once; `tenantOf` names a session's tenant. */
export interface FairShare {
  concurrency: number;
  runningPerSession: number;
  runningPerTenant: number;
  tenantOf: ((sessionId: string) => string) | undefined;
}

/**
 * Decides which waiting call starts next. Sessions take turns (round-robin), so one that floods
 * the queue does not starve the others. Within a session calls start in order, and an `exclusive`
 * call is a barrier: it starts alone, when nothing else of its session runs, and nothing of its
 * session that came after it starts before it has ended.
 *
 * Turns alone do not help once slow calls hold every slot: so no session, and no tenant, may hold
 * more than its share of the slots, and a newcomer finds one free.
 */
export class Admission {
  readonly #concurrency: number;
  readonly #runningPerSession: number;
  readonly #runningPerTenant: number;
  readonly #tenantOf: FairShare['tenantOf'];
  readonly #runningPerTenantNow = new Map<string, number>();
  /** Sessions with waiting calls, in turn order: the next to be served first. */
  readonly #turns = new Map<string, SessionLane>();
  readonly #lanes = new Map<string, SessionLane>();
  readonly #runningPerTool = new Map<string, number>();
  #running = 0;
  #waiting = 0;

  constructor(share: FairShare) {
    this.#concurrency = share.concurrency;
    this.#runningPerSession = share.runningPerSession;
    this.#runningPerTenant = share.runningPerTenant;
    this.#tenantOf = share.tenantOf;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting;
  }

  enqueue(call: LiveCall): void {
    const lane = this.#lane(call.record.sessionId);
    lane.waiting.set(call.record.callId, call);
    this.#waiting++;
    if (!this.#turns.has(call.record.sessionId)) this.#turns.set(call.record.sessionId, lane);
  }

  /** Takes a call out of the queue (it was cancelled while waiting). */
  withdraw(call: LiveCall): void {
    const lane = this.#lanes.get(call.record.sessionId);
    if (!lane?.waiting.delete(call.record.callId)) return;
    this.#waiting--;
    this.#tidy(call.record.sessionId, lane);
  }

  /** The next call that may start now, marked running; undefined when none may. */
  take(): LiveCall | undefined {
    if (this.#running >= this.#concurrency) return undefined;
    for (const [sessionId, lane] of this.#turns) {
      const call = this.#startable(lane);
      if (!call) continue;
      lane.waiting.delete(call.record.callId);
      this.#waiting--;
      lane.running++;
      if (lane.tenant !== undefined) {
        this.#runningPerTenantNow.set(lane.tenant, (this.#runningPerTenantNow.get(lane.tenant) ?? 0) + 1);
      }
      if (call.tool.execution.concurrency === 'exclusive') lane.runningExclusive = true;
      this.#running++;
      this.#runningPerTool.set(call.tool.name, (this.#runningPerTool.get(call.tool.name) ?? 0) + 1);
      // Served: to the back of the line.
      this.#turns.delete(sessionId);
      if (lane.waiting.size > 0) this.#turns.set(sessionId, lane);
      return call;
    }
    return undefined;
  }

  /** A call that `take()` gave out has ended. */
  release(call: LiveCall): void {
    const lane = this.#lanes.get(call.record.sessionId);
    if (!lane) return;
    lane.running--;
    if (lane.tenant !== undefined) {
      const running = (this.#runningPerTenantNow.get(lane.tenant) ?? 1) - 1;
      if (running === 0) this.#runningPerTenantNow.delete(lane.tenant);
      else this.#runningPerTenantNow.set(lane.tenant, running);
    }
    if (call.tool.execution.concurrency === 'exclusive') lane.runningExclusive = false;
    this.#running--;
    const perTool = (this.#runningPerTool.get(call.tool.name) ?? 1) - 1;
    if (perTool === 0) this.#runningPerTool.delete(call.tool.name);
    else this.#runningPerTool.set(call.tool.name, perTool);
    this.#tidy(call.record.sessionId, lane);
  }

  #startable(lane: SessionLane): LiveCall | undefined {
    if (lane.runningExclusive || lane.running >= this.#runningPerSession) return undefined;
    if (
      lane.tenant !== undefined &&
      (this.#runningPerTenantNow.get(lane.tenant) ?? 0) >= this.#runningPerTenant
    ) {
      return undefined;
    }
    for (const call of lane.waiting.values()) {
      if (call.tool.execution.concurrency === 'exclusive') {
        // Only the oldest waiting call may be an exclusive one that starts, and only alone.
        return call === lane.waiting.values().next().value && lane.running === 0 && this.#toolHasRoom(call)
          ? call
          : undefined;
      }
      if (this.#toolHasRoom(call)) return call;
    }
    return undefined;
  }

  #toolHasRoom(call: LiveCall): boolean {
    const limit = call.tool.execution.maxConcurrency;
    return limit === undefined || (this.#runningPerTool.get(call.tool.name) ?? 0) < limit;
  }

  #lane(sessionId: string): SessionLane {
    let lane = this.#lanes.get(sessionId);
    if (!lane) {
      lane = { waiting: new Map(), running: 0, runningExclusive: false, tenant: this.#tenantOf?.(sessionId) };
      this.#lanes.set(sessionId, lane);
    }
    return lane;
  }

  #tidy(sessionId: string, lane: SessionLane): void {
    if (lane.waiting.size === 0) this.#turns.delete(sessionId);
    if (lane.waiting.size === 0 && lane.running === 0) this.#lanes.delete(sessionId);
  }
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The door conformance suite: one table of callers by operations by what each must get, run
 * against every way into a call (REST, MCP in both revisions, a batch, a session whose token
 * changes, A2A, the built-in tools over each). The runtime decides (its `access`); a door only
 * names the caller and carries the answer out in its protocol's words, which its driver reads
 * back as one of the outcomes below. A new door joins with a driver.
 */

/** What a request gets, whatever the protocol's words for it. */
export type Outcome = 'allowed' | 'forbidden' | 'not_found' | 'over_quota';

/**
 * The callers: two users of `acme` (alice holds every tool's scope, bob only `tools`), carol of
 * `bolt` (every scope), acme's tenant-wide token with only `tools` (`tenant`), a static token of
 * acme (every scope, the whole tenant), and a static token of `spent`, whose quota is used up.
 */
export const CALLERS = ['alice', 'bob', 'carol', 'tenant', 'static', 'spent'] as const;
export type CallerName = (typeof CALLERS)[number];

/** The tools: `echo` needs no scope; `vault_export` needs `vault:read` and takes messages; `deploy` needs `deploy:write` and approval. */
export type DoorTool = 'echo' | 'vault_export' | 'deploy';

/** A call made through the door: its id as its maker sees it. */
export interface MadeCall {
  outcome: Outcome;
  callId?: string;
}

/** One door, as the suite drives it. An operation the door does not offer is left out. */
export interface DoorDriver {
  /** Starts a tool (`vault_export` and `deploy` go on in the background). */
  start(caller: CallerName, tool: DoorTool): Promise<MadeCall>;
  /** `spawn_background` of the tool. */
  spawn?(caller: CallerName, tool: DoorTool): Promise<Outcome>;
  /** `spawn_background` of the tool on a schedule. */
  schedule?(caller: CallerName, tool: DoorTool): Promise<Outcome>;
  /** Both tools in one envelope (a JSON-RPC batch): one outcome each, in order. */
  batch?(caller: CallerName, tools: readonly DoorTool[]): Promise<Outcome[]>;
  /** A message to a call, by the id the caller gives. */
  steer?(caller: CallerName, callId: string): Promise<Outcome>;
  cancel?(caller: CallerName, callId: string): Promise<Outcome>;
  /** Approves a call that waits for approval. */
  approve?(caller: CallerName, callId: string): Promise<Outcome>;
  /** Reads a call's record (or task, or status). */
  read?(caller: CallerName, callId: string): Promise<Outcome>;
}

export interface DoorWorld {
  /** The id another caller gives for a call alice made (a tenant-wide view names her segment). */
  idAs(caller: CallerName, aliceId: string): string;
}

const A: Outcome = 'allowed';
const F: Outcome = 'forbidden';
const N: Outcome = 'not_found';
const Q: Outcome = 'over_quota';

/** What each caller gets, in `CALLERS`' order. */
type Row = readonly [Outcome, Outcome, Outcome, Outcome, Outcome, Outcome];

/** Starting a tool (directly, by `spawn_background`, or on a schedule): the tool's scope, then the quota. */
const STARTS: Record<DoorTool, Row> = {
  echo: [A, A, A, A, A, Q],
  vault_export: [A, F, A, F, A, Q],
  deploy: [A, F, A, F, A, Q],
};
/** Touching or reading a call alice made: reachable by her tenant's whole view, and then only with the tool's scope. */
const ALICES_CALL: Row = [A, N, N, F, A, N];
/** A batch of `echo` then `vault_export`: each decided alone. */
const BATCH: Record<CallerName, [Outcome, Outcome]> = {
  alice: [A, A],
  bob: [A, F],
  carol: [A, A],
  tenant: [A, F],
  static: [A, A],
  spent: [Q, Q],
};

const rowOf = (row: Row) => CALLERS.map((caller, i) => [caller, row[i] as Outcome] as const);

/** The operations a door may offer beside `start`. */
export type DoorOperation = Exclude<keyof DoorDriver, 'start'>;

/**
 * Runs the table against a door. `offers`: the operations it has beside `start` (a door with no
 * `spawn_background`, as A2A, whose skills are the tools alone, has no such rows). `open` makes
 * the driver once the world is up.
 */
export function describeDoorConformance(
  name: string,
  offers: readonly DoorOperation[],
  open: () => Promise<{ driver: DoorDriver; world: DoorWorld; close?: () => Promise<void> }>,
): void {
  describe(`Door conformance: ${name}`, { timeout: 60_000 }, () => {
    let driver: DoorDriver;
    let world: DoorWorld;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ driver, world, close } = await open());
    }, 60_000);
    afterAll(async () => close?.());

    /** The operation, which the driver must have since it offers it. */
    const operation = <O extends DoorOperation>(name: O): NonNullable<DoorDriver[O]> => {
      const run = driver[name];
      if (run === undefined) throw new Error(`the driver offers ${name} and has none`);
      return run.bind(driver) as NonNullable<DoorDriver[O]>;
    };
    /** A call alice made of the tool, live: the target of the operations on another's call. */
    const alices = async (tool: DoorTool) => {
      const made = await driver.start('alice', tool);
      expect(made.outcome).toBe('allowed');
      expect(made.callId).toBeDefined();
      return made.callId as string;
    };

    it('has exactly the operations it offers', () => {
      const all: DoorOperation[] = ['spawn', 'schedule', 'batch', 'steer', 'cancel', 'approve', 'read'];
      expect(all.filter((each) => driver[each] !== undefined)).toEqual(
        all.filter((each) => offers.includes(each)),
      );
    });
    for (const tool of ['echo', 'vault_export'] as const) {
      it.each(rowOf(STARTS[tool]))(`start ${tool}: %s gets %s`, async (caller, outcome) => {
        expect((await driver.start(caller, tool)).outcome).toBe(outcome);
      });
    }
    for (const starting of ['spawn', 'schedule'] as const) {
      if (!offers.includes(starting)) continue;
      it.each(rowOf(STARTS.vault_export))(`${starting} vault_export: %s gets %s`, async (caller, outcome) => {
        expect(await operation(starting)(caller, 'vault_export')).toBe(outcome);
      });
    }
    if (offers.includes('batch')) {
      it.each(CALLERS.map((caller) => [caller, BATCH[caller]] as const))(
        'batch [echo, vault_export]: %s gets %j',
        async (caller, outcomes) => {
          expect(await operation('batch')(caller, ['echo', 'vault_export'])).toEqual(outcomes);
        },
      );
    }
    for (const touching of ['steer', 'cancel', 'read'] as const) {
      if (!offers.includes(touching)) continue;
      it.each(rowOf(ALICES_CALL))(
        `${touching} alice's vault_export call: %s gets %s`,
        async (caller, outcome) => {
          const callId = await alices('vault_export');
          expect(await operation(touching)(caller, world.idAs(caller, callId))).toBe(outcome);
        },
      );
    }
    if (offers.includes('approve')) {
      it.each(rowOf(ALICES_CALL))("approve alice's deploy call: %s gets %s", async (caller, outcome) => {
        const callId = await alices('deploy');
        expect(await operation('approve')(caller, world.idAs(caller, callId))).toBe(outcome);
      });
    }
  });
}

import { type Caller, defineTool, isBatonError, type RuntimeFailure } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, type QuotaTaker, type Runtime } from '../src/index.js';
import { deferred, SimulatedClock } from '../src/testing.js';
import { settle } from './helpers.js';

const MINUTE = 60_000;

const narrow: Caller = { via: 'oauth', tenant: 'acme', scopes: ['tools'] };
const wide: Caller = { via: 'oauth', tenant: 'acme', scopes: ['tools', 'vault:read'] };

/** A tool that needs a scope, which runs in the background until the test lets it end. */
function vaultTools() {
  const runs: string[] = [];
  const gate = deferred<void>();
  const vaultExport = defineTool({
    name: 'vault_export',
    description: 'Exports the vault',
    input: z.object({ what: z.string() }),
    execution: { mode: 'background' },
    scope: 'vault:read',
    messages: z.string(),
    async execute({ what }) {
      runs.push(what);
      await gate.promise;
      return `exported ${what}`;
    },
  });
  const approved = defineTool({
    name: 'vault_wipe',
    description: 'Wipes the vault, once approved',
    input: z.object({}),
    execution: { mode: 'background', needsApproval: true },
    scope: 'vault:read',
    execute: () => 'wiped',
  });
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes',
    input: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  });
  return { tools: [vaultExport, approved, echo], runs, gate };
}

/** A quota of `calls` calls, counting who took one. */
function quotaOf(calls: number): { quota: QuotaTaker; taken: Caller[] } {
  const taken: Caller[] = [];
  let left = calls;
  return {
    taken,
    quota: (caller) => {
      if (left <= 0) return { message: 'the tenant acme may make no more calls', retryAfterSeconds: 30 };
      left--;
      taken.push(caller);
      return undefined;
    },
  };
}

describe('the runtime decides what a caller may do, whatever way it comes in', () => {
  it('refuses a tool its scopes do not allow, keeping nothing; the trusted caller and a wide one may', async () => {
    const { tools, runs } = vaultTools();
    const runtime = createRuntime({ tools });
    const args = { what: 'keys' };
    const refused = await runtime.call({ name: 'vault_export', args, sessionId: 's', caller: narrow });
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        code: 'insufficient_scope',
        scope: 'vault:read',
        message: 'calling vault_export needs the scope vault:read',
      },
    });
    expect((await runtime.list({})).calls).toEqual([]);
    // The same id again, as a retry would: refused the same, and the call of another caller with
    // that id is not given to it.
    await runtime.call({ name: 'vault_export', args, sessionId: 's', callId: 'c-1', caller: wide });
    const repeated = await runtime.call({
      name: 'vault_export',
      args,
      sessionId: 's',
      callId: 'c-1',
      caller: narrow,
    });
    expect(repeated.error?.code).toBe('insufficient_scope');
    expect((await runtime.call({ name: 'vault_export', args, sessionId: 's' })).status).toBe('backgrounded');
    expect(runs).toEqual(['keys', 'keys']);
    // What it keeps of the caller, with the call: its rights decide what the call starts.
    expect((await runtime.get('c-1'))?.caller).toEqual(wide);
    await runtime.close();
  });

  it('an operator’s mapping names the scope of a tool that names none', async () => {
    const { tools } = vaultTools();
    const runtime = createRuntime({ tools, access: { toolScopes: { echo: 'echo:run' } } });
    expect(runtime.access.visible(narrow, runtime.tools.definitions()).map((tool) => tool.name)).toEqual([]);
    const reply = await runtime.call({ name: 'echo', args: { text: 'hi' }, sessionId: 's', caller: narrow });
    expect(reply.error).toMatchObject({ code: 'insufficient_scope', scope: 'echo:run' });
    await runtime.close();
  });

  it('takes one unit of quota per call started, after its arguments are valid: a batch of N is N calls', async () => {
    const { tools } = vaultTools();
    const { quota, taken } = quotaOf(3);
    // Untyped, as a request that comes off the wire is.
    const runtime: Runtime = createRuntime({ tools, access: { quota } });
    const notText: unknown = { text: 5 };
    const invalid = await runtime.call({ name: 'echo', args: notText, sessionId: 's', caller: narrow });
    expect(invalid.error?.code).toBe('invalid_arguments');
    expect(taken).toEqual([]);
    const replies = await runtime.callBatch(
      [1, 2, 3, 4].map((n) => ({ name: 'echo', args: { text: `${n}` }, caller: narrow })),
      { sessionId: 's' },
    );
    expect(replies.map((reply) => reply.error?.code ?? reply.output)).toEqual([
      '1',
      '2',
      '3',
      'quota_exceeded',
    ]);
    expect(replies[3]?.error).toMatchObject({ retryAfterSeconds: 30 });
    expect(taken).toHaveLength(3);
    // Refused past the quota: nothing was kept of the fourth.
    expect((await runtime.list({})).calls.filter((call) => call.status === 'succeeded')).toHaveLength(3);
    expect((await runtime.list({})).calls).toHaveLength(4);
    await runtime.close();
  });

  it('answers a call whose quota cannot be read (its count in a store that is away) not kept, never a rejection', async () => {
    const { tools } = vaultTools();
    const runtime = createRuntime({
      tools,
      access: {
        quota: () => Promise.reject(new Error('connect ECONNREFUSED')),
      },
    });
    const reply = await runtime.call({ name: 'echo', args: { text: 'hi' }, sessionId: 's', caller: narrow });
    expect(reply).toMatchObject({ status: 'failed', error: { code: 'persistence_failed' } });
    expect(reply.error?.message).toContain('ECONNREFUSED');
    expect((await runtime.list({})).calls).toEqual([]);
    await runtime.close();
  });

  it('spawn_background runs only a tool its caller may call, and the run is a call of that caller, quota and all', async () => {
    const { tools, runs, gate } = vaultTools();
    const { quota, taken } = quotaOf(3);
    const runtime = createRuntime({ tools, builtins: ['spawn_background'], access: { quota } });
    const spawn = (caller: Caller) =>
      runtime.call({
        name: 'spawn_background',
        args: { tool: 'vault_export', args: { what: 'keys' } },
        sessionId: 's',
        caller,
      });
    const refused = await spawn(narrow);
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'tool_error' } });
    expect(refused.error?.message).toBe('calling vault_export needs the scope vault:read');
    expect(runs).toEqual([]);
    const spawned = await spawn(wide);
    expect(spawned.status).toBe('succeeded');
    await settle();
    expect(runs).toEqual(['keys']);
    const { run_id } = spawned.output as { run_id: string };
    expect((await runtime.get(run_id))?.caller).toEqual(wide);
    // The two spawns and the run each took one; the next spawn's run is past the quota.
    expect(taken).toHaveLength(3);
    const past = await spawn(wide);
    expect(past.error?.code).toBe('quota_exceeded');
    gate.resolve();
    await runtime.close();
  });

  it('each firing of a schedule is a call of the caller kept on it: its quota taken, its refusal said', async () => {
    const { tools, runs, gate } = vaultTools();
    gate.resolve();
    const { quota, taken } = quotaOf(3);
    const clock = new SimulatedClock();
    const failures: RuntimeFailure[] = [];
    const runtime = createRuntime({ tools, builtins: ['spawn_background'], access: { quota }, clock });
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await runtime.ready;
    const made = await runtime.call({
      name: 'spawn_background',
      args: { tool: 'vault_export', args: { what: 'keys' }, schedule: { cron_expression: '* * * * *' } },
      sessionId: 's',
      caller: wide,
    });
    expect(made.output).toMatchObject({ status: 'scheduled' });
    expect((await runtime.schedules.list('s'))[0]?.caller).toEqual(wide);
    for (let i = 0; i < 3; i++) {
      clock.increment(MINUTE);
      await settle();
    }
    // One for the spawn, one for each of the first two firings; the third is past the quota.
    expect(runs).toEqual(['keys', 'keys']);
    expect(taken).toHaveLength(3);
    expect(failures.map((failure) => failure.op)).toEqual(['fire a schedule']);
    await runtime.close();
  });

  it('cancel, steer, approve and reject need the scope of the call’s tool', async () => {
    const { tools, gate } = vaultTools();
    const runtime = createRuntime({ tools });
    await runtime.call({
      name: 'vault_export',
      args: { what: 'keys' },
      sessionId: 's',
      callId: 'c-1',
      caller: wide,
    });
    await runtime.call({ name: 'vault_wipe', args: {}, sessionId: 's', callId: 'c-2', caller: wide });
    const refusedWith = async (touch: Promise<unknown>) => {
      const thrown = await touch.then(
        () => undefined,
        (error: unknown) => error,
      );
      return isBatonError(thrown) ? thrown.code : thrown;
    };
    const as = { caller: narrow };
    expect(await refusedWith(runtime.cancel('c-1', 'stop', as))).toBe('insufficient_scope');
    expect(await refusedWith(runtime.steer('c-1', 'faster', as))).toBe('insufficient_scope');
    expect(await refusedWith(runtime.inputs.approve('c-2', as))).toBe('insufficient_scope');
    expect(await refusedWith(runtime.inputs.reject('c-2', 'no', as))).toBe('insufficient_scope');
    expect((await runtime.get('c-1'))?.status).toBe('backgrounded');
    expect((await runtime.get('c-2'))?.approval).toBe('pending');
    expect(await runtime.steer('c-1', 'faster', { caller: wide })).toMatchObject({ messageSeq: 1 });
    expect(await runtime.inputs.approve('c-2', { caller: wide })).toBe(true);
    expect(await runtime.cancel('c-1', 'stop', { caller: wide })).toBe(true);
    gate.resolve();
    await runtime.close();
  });
});

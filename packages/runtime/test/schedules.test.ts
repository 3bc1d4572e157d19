import { defineTool } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { settle, testRuntime } from './helpers.js';

const MINUTE = 60_000;

function pinger(runs: number[], clock: { now(): number }) {
  return defineTool({
    name: 'ping',
    title: 'Ping',
    description: 'p',
    input: z.object({ host: z.string() }),
    execution: { mode: 'background' },
    execute: ({ host }) => {
      runs.push(clock.now());
      return `${host} is up`;
    },
  });
}

const schedule = (schedule: object) => ({ tool: 'ping', args: { host: 'db' }, schedule });

describe('schedules of spawn_background (the background runs)', () => {
  it('fires a cron schedule on time, three times over simulated time, each firing a background run', async () => {
    const runs: number[] = [];
    const clock = new SimulatedClock();
    const runtime = createRuntime({ tools: [pinger(runs, clock)], builtins: ['spawn_background'], clock });
    await runtime.ready;
    const reply = await runtime.call({
      name: 'spawn_background',
      args: schedule({ cron_expression: '*/10 * * * *' }),
      sessionId: 's1',
    });
    expect(reply.output).toMatchObject({
      created: true,
      status: 'scheduled',
      title: 'Ping',
      tool: 'ping',
      schedule_type: 'cron',
      cron_expression: '*/10 * * * *',
      scheduled_at: null,
      timezone: 'UTC',
      next_trigger_at: '1970-01-01T00:10:00.000Z',
      enabled: true,
    });
    for (let i = 0; i < 3; i++) {
      clock.increment(10 * MINUTE);
      await settle();
    }
    expect(runs).toEqual([10 * MINUTE, 20 * MINUTE, 30 * MINUTE]);
    const [stored] = await runtime.schedules.list('s1');
    expect(stored).toMatchObject({ firings: 3, nextAt: 40 * MINUTE, enabled: true });
    const notifications = await runtime.notifications.list({ sessionId: 's1' });
    expect(notifications).toHaveLength(3);
    expect(notifications[0]?.body).toMatch(
      /^Background run completed\.\n.*\n- title: Ping\n- tool: ping\n- summary: db is up\n/s,
    );
    await runtime.close();
  });

  it('fires a one-shot once, in its time zone-free instant, then disables it', async () => {
    const runs: number[] = [];
    const clock = new SimulatedClock();
    const runtime = createRuntime({ tools: [pinger(runs, clock)], builtins: ['spawn_background'], clock });
    await runtime.ready;
    await runtime.call({
      name: 'spawn_background',
      args: schedule({ scheduled_at: '1970-01-01T00:05:00Z' }),
      sessionId: 's1',
    });
    for (let i = 0; i < 3; i++) {
      clock.increment(5 * MINUTE);
      await settle();
    }
    expect(runs).toEqual([5 * MINUTE]);
    expect((await runtime.schedules.list('s1'))[0]).toMatchObject({ enabled: false, firings: 1 });
    await runtime.close();
  });

  it('keeps both kinds across a restart: a new runtime on the store fires them', async () => {
    const store = memoryStore();
    const runs: number[] = [];
    const clock = new SimulatedClock();
    const first = createRuntime({
      tools: [pinger(runs, clock)],
      builtins: ['spawn_background'],
      clock,
      store,
    });
    await first.call({
      name: 'spawn_background',
      args: schedule({ cron_expression: '0 * * * *' }),
      sessionId: 's1',
    });
    await first.call({
      name: 'spawn_background',
      args: schedule({ scheduled_at: '1970-01-01T01:30:00Z' }),
      sessionId: 's1',
    });
    await first.close();

    const second = createRuntime({
      tools: [pinger(runs, clock)],
      builtins: ['spawn_background'],
      clock,
      store,
    });
    await second.ready;
    for (let i = 0; i < 4; i++) {
      clock.increment(30 * MINUTE);
      await settle();
    }
    expect(runs).toEqual([60 * MINUTE, 90 * MINUTE, 120 * MINUTE]);
    await second.close();
  });

  it.each([
    [
      { schedule: {} },
      'schedule must include exactly one of cron_expression (recurring) or scheduled_at (one-shot)',
    ],
    [
      { schedule: { cron_expression: '* * * * *', scheduled_at: '2026-04-16T15:30:00Z' } },
      'schedule must not include both cron_expression and scheduled_at; provide exactly one',
    ],
    [{ schedule: { scheduled_at: 'tomorrow' } }, 'scheduled_at must be RFC3339'],
    [
      { schedule: { cron_expression: '* * * *' } },
      'cron_expression must have 5 fields: minute, hour, day of month, month, day of week',
    ],
    [
      { schedule: { cron_expression: '* * * * *', timezone: 'Mars/Base' } },
      'timezone must be an IANA time zone, not "Mars/Base"',
    ],
  ])('refuses %j', async (extra, message) => {
    const { runtime } = testRuntime([pinger([], { now: () => 0 })], { builtins: ['spawn_background'] });
    const reply = await runtime.call({
      name: 'spawn_background',
      args: { tool: 'ping', args: { host: 'db' }, ...extra },
      sessionId: 's',
    });
    expect(reply.error).toEqual({ code: 'tool_error', message });
  });

  it('refuses a schedule that is not an object by its schema, naming the path', async () => {
    const { runtime } = testRuntime([pinger([], { now: () => 0 })], { builtins: ['spawn_background'] });
    const reply = await runtime.call({
      name: 'spawn_background',
      args: { tool: 'ping', args: {}, schedule: 'daily' },
      sessionId: 's',
    });
    expect(reply.error).toMatchObject({
      code: 'invalid_arguments',
      issues: [{ path: 'schedule', message: 'must be object' }],
    });
  });

  it('keeps at most 10 active schedules per session, lists them, and cancels one by id', async () => {
    const { runtime } = testRuntime([pinger([], { now: () => 0 })], { builtins: ['spawn_background'] });
    const create = () =>
      runtime.call({
        name: 'spawn_background',
        args: schedule({ cron_expression: '0 9 * * 1' }),
        sessionId: 's',
      });
    for (let i = 0; i < 10; i++) expect((await create()).status).toBe('succeeded');
    expect((await create()).error?.message).toBe(
      'Maximum 10 active schedules per session. Cancel an existing schedule first.',
    );
    const [first] = await runtime.schedules.list('s');
    expect(await runtime.schedules.cancel(first?.id ?? '')).toBe(true);
    expect(await runtime.schedules.cancel(first?.id ?? '')).toBe(false);
    expect((await create()).status).toBe('succeeded');
  });

  it('reads a cron expression in its time zone', async () => {
    const clock = new SimulatedClock();
    const runtime = createRuntime({ tools: [pinger([], clock)], builtins: ['spawn_background'], clock });
    const reply = await runtime.call({
      name: 'spawn_background',
      args: schedule({ cron_expression: '30 9 * * *', timezone: 'America/New_York' }),
      sessionId: 's',
    });
    // 09:30 in New York on 1 January 1970 (UTC-5) is 14:30 UTC.
    expect((reply.output as { next_trigger_at: string }).next_trigger_at).toBe('1970-01-01T14:30:00.000Z');
    await runtime.close();
  });
});

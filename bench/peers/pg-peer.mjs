// A process of row 8: a PostgreSQL job queue (PEER: `pg-boss` or `graphile-worker`), or DBOS
// Transact's durable workflows (PEER: `dbos`), doing what Baton's one process does, in one process
// with both roles, on its own database (DATABASE_URL).
// Each call adds one job and its caller waits for the result. MODE `per-call` adds each job with
// its own statement (`send()`, `addJob()`); MODE `batched` adds the jobs of one event-loop tick
// with one statement (`insert()`, `addJobs()`), the ten lines of caller code a user would write.
//
// The reply takes each queue's fastest path: a trigger on the job table NOTIFYs when a job
// completes, and the adding process's one LISTEN connection hands it to the waiting caller (on
// the split path, each adding process has a channel of its own). pg-boss keeps the handler's
// result in the job's `output`, and the notice carries it. graphile-worker keeps no result (a
// completed job is deleted), so its notice says only which job completed: a reply cheaper than
// Baton's, which reads the result.
//
// DBOS runs each call as a workflow of one durable step (`add_one`), started and awaited in
// process (`startWorkflow`, then `getResult`), with its defaults; DBOS is a process-wide singleton,
// which a process per subject suits.
//
// ROLE `both` (the default) is one process that adds jobs and runs them; `adder` only adds them
// and waits for their completions, `worker` only runs them: the split path, as Baton's client and
// worker processes are. Start the adders first (one at a time): they make the queue and the
// completion trigger.
//
// The LISTEN connection is made again when it is lost (a backend killed, PostgreSQL restarted), and
// then the callers still waiting look their jobs up, as a user's code would have to: a notice sent
// while it was away is not sent again. An add that fails (the database away) is the caller's
// `refused`: nothing was kept.
//
// SLOTS (the long run) sets the jobs a worker process runs at once, as Baton's worker runs 64:
// graphile-worker's `concurrentJobs`, pg-boss's batch (its handler takes the batch's jobs at once).
//
// Driven by the line protocol of role-protocol.mjs.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { countQueries, jobStarted, serve } from '../workers/role-protocol.mjs';

countQueries(pg);

const url = process.env.DATABASE_URL;
const peer = process.env.PEER;
const batched = process.env.MODE === 'batched';
const role = process.env.ROLE ?? 'both';
const adds = role !== 'worker';
const works = role !== 'adder';
/**
 * Where completions are told. One process with both roles hears of every job on one channel; on
 * the split path each adding process hears of its own jobs only, the job carrying its channel's
 * suffix (the one process's jobs and trigger stay as they were before the split path was measured).
 */
const ADDER = role === 'adder' ? String(process.pid) : undefined;
const CHANNEL = ADDER === undefined ? 'bench_done' : `bench_done_${ADDER}`;
/** Jobs one fetch takes, for both queues: enough to keep 1,000 calls in flight moving. */
const FETCH = 250;

/** Callers waiting for their job, by the call's number (carried in the job's data); `added` once their add returned. */
const waiting = new Map();
const SLOTS = process.env.SLOTS ? Number(process.env.SLOTS) : undefined;

function completed(key, result) {
  const caller = waiting.get(key);
  if (!caller) return;
  waiting.delete(key);
  caller.resolve(result);
}

/**
 * The LISTEN connection, made again whenever it is lost; each time, `sweep` looks up the jobs of
 * the callers still waiting whose notice may have been sent while it was away.
 */
async function listen(sweep) {
  for (;;) {
    const listener = new pg.Client({ connectionString: url });
    const lost = new Promise((resolve) => {
      listener.on('error', resolve);
      listener.on('end', resolve);
    });
    listener.on('notification', ({ payload }) => {
      const [key, result] = payload.split(':');
      completed(key, result);
    });
    try {
      await listener.connect();
      await listener.query(`listen ${CHANNEL}`);
      await sweep(listener);
    } catch (error) {
      process.stderr.write(`pg-peer: listening failed, again in 1 s: ${error.message}\n`);
      listener.end().catch(() => {});
      await sleep(1_000);
      continue;
    }
    listening = listener;
    await lost;
    listening = undefined;
    if (stopping) return;
    await sleep(200);
  }
}
let listening;
let stopping = false;

/** Runs an adder's set-up (the completion trigger) on a connection of its own. */
async function setUp(sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The keys of the callers whose add returned: their jobs are in the queue, or ended. */
function addedKeys() {
  return [...waiting].filter(([, caller]) => caller.added).map(([key]) => key);
}

/** One statement per tick: callers push, the first push of a tick schedules the flush. */
function perTick(insertAll) {
  let pending = [];
  return (job) =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) {
        setImmediate(() => {
          const batch = pending;
          pending = [];
          insertAll(batch.map((entry) => entry.job)).then(
            () => {
              for (const entry of batch) entry.resolve();
            },
            (error) => {
              for (const entry of batch) entry.reject(error);
            },
          );
        });
      }
      pending.push({ job, resolve, reject });
    });
}

/**
 * The completion trigger's function, made (or made again) by each adder, one at a time: `job` is
 * the job's data as the trigger sees it, `value` the notice's payload.
 */
const doneFunction = (job, value) => `
  create or replace function bench_done() returns trigger language plpgsql as $$
  begin
    perform pg_notify(${ADDER === undefined ? `'${CHANNEL}'` : `'bench_done_' || (${job}->>'a')`}, ${value});
    return null;
  end $$;`;

async function startPgBoss() {
  const { PgBoss } = await import('pg-boss');
  const boss = new PgBoss({
    connectionString: url,
    max: 10,
    useListenNotify: true,
    schedule: false,
    supervise: false,
  });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.stack}\n`));
  await boss.start();
  if (adds) {
    if (!(await boss.getQueue('bench'))) await boss.createQueue('bench', { notify: true });
    await setUp(`
      ${doneFunction('new.data', `(new.data->>'i') || ':' || coalesce(new.output->>'value', '')`)}
      create or replace trigger bench_done after update on pgboss.job
        for each row when (new.state = 'completed' and old.state <> 'completed') execute function bench_done();
    `);
  }
  if (works) {
    await boss.work(
      'bench',
      { batchSize: SLOTS ?? FETCH, burstWhenBatchFull: true, perJobResults: true },
      async (jobs) =>
        Promise.all(
          jobs.map(async (job) => {
            await jobStarted(job.data.madeAt);
            return { id: job.id, status: 'completed', output: { value: job.data.i + 1 } };
          }),
        ),
    );
  }
  /** Completed jobs keep their output: a caller whose notice was missed reads it. */
  const sweep = async (client) => {
    const keys = addedKeys();
    if (keys.length === 0) return;
    const { rows } = await client.query(
      `select data->>'i' as i, output->>'value' as value from pgboss.job
        where name = 'bench' and state = 'completed' and data->>'i' = any($1::text[])`,
      [keys],
    );
    for (const row of rows) completed(row.i, row.value);
  };
  const add = batched
    ? perTick((jobs) =>
        boss.insert(
          'bench',
          jobs.map((data) => ({ data })),
        ),
      )
    : (data) => boss.send('bench', data);
  return { add, sweep, stop: () => boss.stop({ graceful: false, wait: true }) };
}

async function startGraphileWorker() {
  const { run, makeWorkerUtils, Logger } = await import('graphile-worker');
  const logger = new Logger(() => (level, message) => {
    if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  const utils = await makeWorkerUtils({ connectionString: url, logger });
  await utils.migrate();
  if (adds) {
    await setUp(`
      ${doneFunction('old.payload', `(old.payload->>'i') || ':'`)}
      create or replace trigger bench_done after delete on graphile_worker._private_jobs
        for each row execute function bench_done();
    `);
  }
  const runner = works
    ? await run({
        connectionString: url,
        logger,
        noHandleSignals: true,
        taskList: {
          add_one: async (payload) => {
            await jobStarted(payload.madeAt);
            return payload.i + 1;
          },
        },
        preset: {
          worker: {
            concurrentJobs: SLOTS ?? 64,
            maxPoolSize: 10,
            localQueue: { size: FETCH },
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
          },
        },
      })
    : undefined;
  // A runner that gives up (its connections lost past what it retries) ends the process, as a
  // user's `await runner.promise` would, for its supervisor to start another.
  runner?.promise.catch((error) => {
    process.stderr.write(`graphile-worker: the runner stopped: ${error.stack}\n`);
    process.exit(1);
  });
  const add = batched
    ? perTick((payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: 'add_one', payload }))))
    : (payload) => utils.addJob('add_one', payload);
  /** A completed job is deleted: a caller whose added job is gone has its answer (which it does not carry). */
  const sweep = async (client) => {
    const keys = addedKeys();
    if (keys.length === 0) return;
    const { rows } = await client.query(
      `select payload->>'i' as i from graphile_worker._private_jobs where payload->>'i' = any($1::text[])`,
      [keys],
    );
    const queued = new Set(rows.map((row) => row.i));
    for (const key of keys) if (!queued.has(key)) completed(key, '');
  };
  return {
    add,
    sweep,
    stop: async () => {
      await runner?.stop();
      await utils.release();
    },
  };
}

async function startDbos() {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  // Its defaults, but for logs: only errors, on stderr (stdout carries the line protocol).
  DBOS.setConfig({ name: 'bench', systemDatabaseUrl: url, logLevel: 'error' });
  const addOne = async (i) => i + 1;
  const workflow = DBOS.registerWorkflow((i) => DBOS.runStep(() => addOne(i), { name: 'add_one' }), {
    name: 'bench_add_one',
  });
  await DBOS.launch();
  return {
    async call(i) {
      const handle = await DBOS.startWorkflow(workflow)(i);
      return handle.getResult();
    },
    stop: () => DBOS.shutdown(),
  };
}

if (peer === 'dbos') {
  const dbos = await startDbos();
  serve({
    async call(i) {
      const result = await dbos.call(i);
      if (result !== i + 1) throw new Error(`workflow ${i} answered ${result}`);
    },
    stop: () => dbos.stop(),
  });
} else {
  const queue = peer === 'pg-boss' ? await startPgBoss() : await startGraphileWorker();
  const listened = adds ? listen(queue.sweep) : Promise.resolve();
  serve({
    async call(i, madeAt) {
      if (!adds) throw new Error('a worker process makes no calls');
      const key = String(i);
      const caller = { added: false, resolve: undefined };
      const done = new Promise((resolve) => {
        caller.resolve = resolve;
      });
      waiting.set(key, caller);
      try {
        await queue.add({
          i,
          ...(ADDER === undefined ? {} : { a: ADDER }),
          ...(madeAt === undefined ? {} : { madeAt }),
        });
      } catch (error) {
        waiting.delete(key);
        throw Object.assign(error, { refused: true });
      }
      caller.added = true;
      const result = await done;
      if (peer === 'pg-boss' && Number(result) !== i + 1) throw new Error(`job ${i} answered ${result}`);
    },
    async stop() {
      stopping = true;
      await queue.stop();
      await listening?.end();
      await listened;
    },
  });
}

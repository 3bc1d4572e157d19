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
// Driven by the line protocol of role-protocol.mjs.
import pg from 'pg';
import { countQueries, serve } from '../workers/role-protocol.mjs';

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

/** Callers waiting for their job, by the call's number (carried in the job's data). */
const waiting = new Map();
const listener = new pg.Client({ connectionString: url });
if (peer !== 'dbos' && adds) await listener.connect();
listener.on('notification', ({ payload }) => {
  const [key, result] = payload.split(':');
  const resolve = waiting.get(key);
  if (!resolve) throw new Error(`a completion for no waiting call: ${payload}`);
  waiting.delete(key);
  resolve(result);
});

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
    await listener.query(`
      ${doneFunction('new.data', `(new.data->>'i') || ':' || coalesce(new.output->>'value', '')`)}
      create or replace trigger bench_done after update on pgboss.job
        for each row when (new.state = 'completed' and old.state <> 'completed') execute function bench_done();
    `);
  }
  if (works) {
    await boss.work(
      'bench',
      { batchSize: FETCH, burstWhenBatchFull: true, perJobResults: true },
      async (jobs) =>
        jobs.map((job) => ({ id: job.id, status: 'completed', output: { value: job.data.i + 1 } })),
    );
  }
  const add = batched
    ? perTick((jobs) =>
        boss.insert(
          'bench',
          jobs.map((data) => ({ data })),
        ),
      )
    : (data) => boss.send('bench', data);
  return { add, stop: () => boss.stop({ graceful: false, wait: true }) };
}

async function startGraphileWorker() {
  const { run, makeWorkerUtils, Logger } = await import('graphile-worker');
  const logger = new Logger(() => (level, message) => {
    if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  const utils = await makeWorkerUtils({ connectionString: url, logger });
  await utils.migrate();
  if (adds) {
    await listener.query(`
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
        taskList: { add_one: async (payload) => payload.i + 1 },
        preset: {
          worker: {
            concurrentJobs: 64,
            maxPoolSize: 10,
            localQueue: { size: FETCH },
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
          },
        },
      })
    : undefined;
  const add = batched
    ? perTick((payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: 'add_one', payload }))))
    : (payload) => utils.addJob('add_one', payload);
  return {
    add,
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
  if (adds) await listener.query(`listen ${CHANNEL}`);
  serve({
    async call(i) {
      if (!adds) throw new Error('a worker process makes no calls');
      const done = new Promise((resolve) => waiting.set(String(i), resolve));
      await queue.add(ADDER === undefined ? { i } : { i, a: ADDER });
      const result = await done;
      if (peer === 'pg-boss' && Number(result) !== i + 1) throw new Error(`job ${i} answered ${result}`);
    },
    async stop() {
      await queue.stop();
      if (adds) await listener.end();
    },
  });
}

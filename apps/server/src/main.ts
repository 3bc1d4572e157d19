/** `npm start`: the reference server on the embedded SQLite store. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { demoTools } from './demo-tools.js';

try {
  const config = loadConfig(process.env);
  mkdirSync(dirname(config.storePath), { recursive: true });
  const runtime = createRuntime({
    tools: demoTools,
    store: sqliteStore({ path: config.storePath }),
    inlineBudgetMs: config.inlineBudgetMs,
  });
  await runtime.ready;
  const app = buildApp(runtime);
  const address = await app.listen({ host: config.host, port: config.port });
  process.stdout.write(
    `Baton is listening on ${address}\n  API:     ${address}/v1/calls\n  tools:   ${address}/v1/tools\n  health:  ${address}/healthz\n  store:   ${config.storePath}\n`,
  );
  const stop = async () => {
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

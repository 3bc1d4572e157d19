// One cell of the host suite, run inside a network namespace with only loopback (the suite starts
// it with `unshare --net`): the scripted model, `baton serve` behind a proxy that records the MCP
// traffic, and the real host, driven headless, in a throw-away HOME. Prints one JSON report.
//   node scenario.mjs <host> <cell> <hosts-dir> <work-dir>
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HOSTS } from './hosts.mjs';
import { scriptedModel } from './scripted-model.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SERVER = join(here, '..', '..', 'apps', 'server', 'dist', 'main.js');
const TOOLS = join(here, 'host-tools.mjs');
/** Fixed ports: the namespace is the scenario's own. */
const MODEL_PORT = 18301;
const BATON_PORT = 18302;
const MCP_PORT = 18303;

/** Each cell: the tool the model calls. */
const CELLS = { fast: 'quick_lookup', 'slow-headless': 'slow_lookup', 'slow-restart': 'slow_lookup' };

const [hostName, cell, hostsDir, workDir] = process.argv.slice(2);
const host = HOSTS[hostName];
if (!host || !CELLS[cell] || !hostsDir || !workDir) {
  throw new Error('usage: node scenario.mjs <claude> <fast|slow-headless> <hosts-dir> <work-dir>');
}
const topic = `t${Date.now().toString(36)}`;

/** `baton serve` over the suite's tools, on SQLite in the work directory; started once it listens. */
async function startBaton() {
  const started = spawn(process.execPath, [SERVER, TOOLS], {
    env: {
      ...process.env,
      BATON_PORT: String(BATON_PORT),
      BATON_STORE: join(workDir, 'baton.db'),
      // A restart hands the slow call over at once: the next start takes it up.
      BATON_DRAIN_MS: '100',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: started.stdout })) {
    if (line.includes('listening on')) break;
  }
  started.stdout.resume();
  return started;
}

async function stopBaton(running) {
  const exited = new Promise((resolve) => running.on('exit', resolve));
  running.kill('SIGTERM');
  await exited;
}

let baton = await startBaton();
const restarts = [];
const model = await scriptedModel({
  api: host.api,
  tool: CELLS[cell],
  args: { topic },
  port: MODEL_PORT,
  // Before the model follows its acknowledgement: Baton restarts under the running call.
  beforeWait:
    cell === 'slow-restart'
      ? async () => {
          await stopBaton(baton);
          baton = await startBaton();
          restarts.push(Date.now());
        }
      : undefined,
});

/** What the host said over MCP: each JSON-RPC request's method, and initialize's terms. */
const mcpTraffic = [];
const proxy = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      for (const message of [JSON.parse(body.toString() || 'null')].flat()) {
        if (!message?.method) continue;
        mcpTraffic.push({
          method: message.method,
          version: req.headers['mcp-protocol-version'],
          ...(message.method === 'initialize'
            ? {
                initialize: {
                  protocolVersion: message.params?.protocolVersion,
                  capabilities: message.params?.capabilities,
                },
              }
            : {}),
          ...(message.method === 'tools/call'
            ? { tool: message.params?.name, task: message.params?.task !== undefined }
            : {}),
          // 2026-07-28: what the client takes comes with each request.
          ...(message.params?._meta?.['io.modelcontextprotocol/clientCapabilities']
            ? { capabilities: message.params._meta['io.modelcontextprotocol/clientCapabilities'] }
            : {}),
        });
      }
    } catch {
      // Not JSON (a GET's stream): nothing to record.
    }
    const forward = httpRequest(
      { host: '127.0.0.1', port: BATON_PORT, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    forward.end(body);
  });
});
await new Promise((resolve) => proxy.listen(MCP_PORT, '127.0.0.1', resolve));

const home = join(workDir, 'home');
mkdirSync(home, { recursive: true });
const run = host.run({
  bin: join(hostsDir, 'node_modules', '.bin', host.bin),
  home,
  modelUrl: `http://127.0.0.1:${MODEL_PORT}`,
  mcpUrl: `http://127.0.0.1:${MCP_PORT}/mcp`,
  prompt: `Look up ${topic} with ${CELLS[cell]}.`,
  write: (name, text) => {
    const path = join(home, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  },
});
const child = spawn(run.command, run.args, {
  cwd: workDir,
  env: { PATH: process.env.PATH, HOME: home, ...run.env },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stdout.on('data', (chunk) => {
  stdout += chunk;
});
child.stderr.on('data', (chunk) => {
  stderr += chunk;
});
const exitCode = await new Promise((resolve) => {
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  child.on('close', (code) => {
    clearTimeout(timer);
    resolve(code);
  });
});

const calls = await fetch(`http://127.0.0.1:${BATON_PORT}/v1/calls?limit=100`).then((answer) =>
  answer.json(),
);
await stopBaton(baton);
proxy.close();
await model.close();
process.stdout.write(
  `${JSON.stringify({
    host: hostName,
    cell,
    mark: `found-${topic}`,
    exitCode,
    stdout: stdout.slice(-2_000),
    stderr: stderr.slice(-2_000),
    requests: model.requests,
    mcp: mcpTraffic,
    calls: calls.calls.map(({ toolName, status }) => ({ toolName, status })),
    restarts: restarts.length,
  })}\n`,
);

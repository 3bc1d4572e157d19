/**
 * A remote MCP server made with the official SDK (v1, 2025-11-25, its tasks support), on a real
 * port, stateless: a tool whose task the test ends by hand, a quick one, and one that fails.
 */
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface RemoteServer {
  url: URL;
  /** The topics of the report tasks created, in order: a second call shows up here. */
  readonly created: readonly string[];
  /** Ends the report task of `topic` with `text`. */
  finish(topic: string, text: string): Promise<void>;
  /** Resolves once the report task of `topic` has this status. */
  taskReaches(topic: string, status: string): Promise<void>;
  /** Resolves once a report task for `topic` exists. */
  taskCreated(topic: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRemoteServer(): Promise<RemoteServer> {
  /** Says when any task's status changes, so a test can wait for one without polling. */
  const statusChanged = new EventEmitter();
  const taskStore = new (class extends InMemoryTaskStore {
    override async updateTaskStatus(...args: Parameters<InMemoryTaskStore['updateTaskStatus']>) {
      await super.updateTaskStatus(...args);
      statusChanged.emit('change');
    }
  })();
  const tasks = new Map<string, string>();
  const created: string[] = [];
  const waiting = new Map<string, () => void>();

  const serverForOneRequest = () => {
    const server = new McpServer(
      { name: 'remote-reports', version: '1.0.0' },
      { capabilities: { tasks: { requests: { tools: { call: {} } }, list: {}, cancel: {} } }, taskStore },
    );
    server.experimental.tasks.registerToolTask(
      'slow_report',
      {
        description: 'Writes a report on a topic; takes minutes',
        inputSchema: { topic: z.string() },
        execution: { taskSupport: 'optional' },
      },
      {
        async createTask({ topic }, extra) {
          // Clients poll at once: the test waits on nothing but the task.
          const task = await extra.taskStore.createTask({
            ttl: extra.taskRequestedTtl ?? 600_000,
            pollInterval: 5,
          });
          tasks.set(topic, task.taskId);
          created.push(topic);
          waiting.get(topic)?.();
          return { task };
        },
        getTask: async (_args, extra) => {
          const task = await extra.taskStore.getTask(extra.taskId);
          if (!task) throw new Error(`no task ${extra.taskId}`);
          return task;
        },
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as { content: [] },
      },
    );
    server.registerTool(
      'quick_sum',
      { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    );
    server.registerTool(
      'archive.lookup',
      { description: 'Looks something up in the archive', inputSchema: { key: z.string() } },
      async () => ({ isError: true, content: [{ type: 'text', text: 'the archive is down' }] }),
    );
    return server;
  };

  const http = createServer(async (request, response) => {
    const server = serverForOneRequest();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    created,
    async finish(topic, text) {
      const taskId = tasks.get(topic);
      if (!taskId) throw new Error(`no report task for ${topic}`);
      await taskStore.storeTaskResult(taskId, 'completed', { content: [{ type: 'text', text }] });
    },
    taskReaches: (topic, status) =>
      new Promise((resolve) => {
        const check = async () => {
          const taskId = tasks.get(topic);
          if (taskId !== undefined && (await taskStore.getTask(taskId))?.status === status) resolve();
          else statusChanged.once('change', check);
        };
        void check();
      }),
    taskCreated: (topic) =>
      tasks.has(topic) ? Promise.resolve() : new Promise((resolve) => waiting.set(topic, resolve)),
    async close() {
      http.closeAllConnections();
      http.close();
      taskStore.cleanup();
    },
  };
}

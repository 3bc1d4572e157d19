import {
  type AnyTool,
  type Caller,
  type CallRecord,
  type CallReply,
  defineTool,
  type ExecutionMode,
  ToolError,
  type ToolRegistry,
} from '@baton/contracts';
import type { Access } from '../access.js';
import { SPAWN_BACKGROUND } from '../builtin-names.js';
import { newId } from '../ids.js';
import { runPaths } from '../keys.js';
import { SPAWN_MESSAGES } from '../messages.js';
import type { CallRequest } from '../options.js';
import { parseScheduleTiming, type ScheduleRunner, scheduledReply } from './schedules.js';

/**
 * The runtime's own entry for a run: a call made in the background whatever its tool's mode, with
 * its label kept on its record. Not the public `call`: a caller cannot ask for this.
 */
export type StartRun = (request: CallRequest, run: NonNullable<CallRecord['run']>) => Promise<CallReply>;

export interface SpawnHost {
  tools: ToolRegistry;
  /** Whether the caller of `spawn_background` may call the tool it asks to run. */
  access: Pick<Access, 'scopeRefusal'>;
  defaultMode: ExecutionMode;
  start: StartRun;
  schedules: ScheduleRunner;
}

/** Starts one background run of a tool in a session (now, or when a schedule fires). */
export async function startRun(
  host: Pick<SpawnHost, 'start'>,
  run: {
    sessionId: string;
    toolName: string;
    args: unknown;
    title: string;
    signalOnCompletion: boolean;
    caller?: Caller;
  },
): Promise<CallReply> {
  // The run is its caller's call: its scope and its quota are decided as if it had called the tool.
  return host.start(
    {
      name: run.toolName,
      args: run.args,
      sessionId: run.sessionId,
      callId: `bg_${newId().replaceAll('-', '')}`,
      ...(run.caller !== undefined ? { caller: run.caller } : {}),
    },
    { title: run.title, signalOnCompletion: run.signalOnCompletion },
  );
}

/** The background runs' parameters, word for word. */
const PARAMETERS = {
  type: 'object',
  properties: {
    tool: { type: 'string', description: 'Name of the built-in tool to execute in the background' },
    args: { type: 'object', description: 'Arguments to pass to the target tool' },
    title: { type: 'string', description: 'Optional human-readable label for the background run' },
    schedule: {
      type: 'object',
      description:
        'Optional session schedule. When provided, this creates a scheduled monitor instead of starting the run immediately.',
      properties: {
        cron_expression: {
          type: 'string',
          description:
            "Standard 5-field cron expression for recurring runs (e.g. '*/10 * * * *' for every 10 minutes)",
        },
        scheduled_at: {
          type: 'string',
          description: "ISO 8601 datetime for a one-shot run (e.g. '2026-04-16T15:30:00Z')",
        },
        timezone: { type: 'string', description: 'IANA timezone for the schedule. Default: UTC' },
      },
      additionalProperties: false,
    },
    signal_on_completion: {
      type: 'boolean',
      description: 'Send a synthetic user message back to the session when the run completes',
      default: true,
    },
  },
  required: ['tool', 'args'],
  additionalProperties: false,
} as const;

interface SpawnArgs {
  tool: string;
  args: Record<string, unknown>;
  title?: string;
  schedule?: object;
  signal_on_completion?: boolean;
}

/** The background runs' `spawn_background`: runs a background-capable tool as a labelled run of the session. */
export function spawnBackgroundTool(host: SpawnHost): AnyTool {
  return defineTool({
    name: SPAWN_BACKGROUND,
    title: 'Spawn Background',
    description:
      'Run a background-capable built-in tool asynchronously. Returns immediately and signals the session when the background run completes.',
    input: PARAMETERS,
    async execute(input, ctx) {
      const {
        tool: requested,
        args,
        title,
        schedule,
        signal_on_completion: signalOnCompletion = true,
        // The arguments passed PARAMETERS (ajv) before they got here.
      } = input as unknown as SpawnArgs;
      const toolName = requested.trim();
      if (!toolName) throw new ToolError(SPAWN_MESSAGES.missingTool);
      const timing = schedule === undefined ? undefined : parseScheduleTiming(schedule);
      if (toolName === SPAWN_BACKGROUND) throw new ToolError(SPAWN_MESSAGES.recursive);
      const tool = host.tools.get(toolName);
      if (!tool) throw new ToolError(SPAWN_MESSAGES.unknownTool(toolName));
      if ((tool.execution.mode ?? host.defaultMode) === 'inline') {
        throw new ToolError(SPAWN_MESSAGES.notBackground(toolName));
      }
      // Asked for now, and decided again at each firing of a schedule with the caller kept on it.
      const refused = host.access.scopeRefusal(ctx.caller, tool);
      if (refused) throw new ToolError(refused.message);
      const label = title?.trim() || tool.title || `Background ${toolName}`;
      const caller = ctx.caller.via === 'trusted' ? {} : { caller: ctx.caller };
      const run = { sessionId: ctx.sessionId, toolName, args, title: label, signalOnCompletion, ...caller };
      if (timing) return scheduledReply(await host.schedules.create({ ...run, ...timing }));
      const reply = await startRun(host, run);
      if (reply.status !== 'backgrounded') {
        throw new ToolError(reply.error?.message ?? SPAWN_MESSAGES.endedAtOnce(reply.status));
      }
      const runId = reply.callId;
      const { artifactDir, logPath, resultPath } = runPaths(runId);
      return {
        run_id: runId,
        resource_id: runId,
        title: label,
        tool: toolName,
        status: 'running',
        signal_on_completion: signalOnCompletion,
        artifact_dir: artifactDir,
        log_path: logPath,
        result_path: resultPath,
      };
    },
  });
}

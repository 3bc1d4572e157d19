import { type McpToolDeclaration, toMcpTool } from '@baton/contracts';
import type { Tool } from '@modelcontextprotocol/server';
import { listedTools, servesControl } from './background-control.js';
import { CALL_APP_URI } from './call-app.js';
import type { Serving } from './serving.js';

type DeclaringServing = Pick<
  Serving,
  'runtime' | 'scope' | 'defaultMode' | 'backgroundControl' | 'sessionName' | 'era'
>;

/** The control tools whose work a task does itself: `tasks/get`, `tasks/result`, `tasks/cancel`. */
const TASK_DOUBLES = ['check_background', 'wait_background', 'cancel_background'] as const;

/** Where the output's shape is told to a client that is not given the schema. */
function shapeWords(schema: unknown, control: boolean): string {
  const where = control
    ? 'When the call goes on in the background, the answer is an acknowledgement, and wait_background\'s "result" is the output.'
    : 'When the call goes on in the background, the answer is an acknowledgement, and the output comes later.';
  return `Output (JSON Schema): ${JSON.stringify(schema)}. ${where}`;
}

/**
 * The tools as this client is shown them. A tool that may go to the background keeps its output
 * schema only for a client that takes tasks: for any other, a promoted call answers with an
 * acknowledgement, which a client holding the schema refuses as a result not of that shape (SDK
 * v1: -32600; OpenAI Agents then tells the model to try again, and a second call runs). Such a
 * client is told the shape in the description instead, and gets the output through
 * `wait_background`.
 */
export function declaredTools(serving: DeclaringServing, takesTasks: boolean): Tool[] {
  const control = servesControl(serving);
  // A client that takes tasks follows a call to its result as a task: a tool that gives the same
  // result a second way would have its model given it twice (once from the tool, once from the
  // task). Steering has no task method, so steer_background stays.
  const listed = takesTasks
    ? listedTools(serving).filter((tool) => !TASK_DOUBLES.includes(tool.name as never))
    : listedTools(serving);
  return listed.map((tool) => {
    const declared: McpToolDeclaration = toMcpTool(tool, { defaultMode: serving.defaultMode });
    // A call that may go on in the background is shown by the call's MCP App, which follows it
    // with the background-control tools.
    const declaration =
      control && declared.execution.taskSupport !== 'forbidden'
        ? { ...declared, _meta: appMeta(declared) }
        : declared;
    const { outputSchema, ...rest } = declaration;
    if (takesTasks || outputSchema === undefined || declaration.execution.taskSupport !== 'optional') {
      return declaration as Tool;
    }
    return { ...rest, description: `${rest.description}\n\n${shapeWords(outputSchema, control)}` } as Tool;
  });
}

/** MCP Apps' link from a tool to its view, in the current form and the one hosts read before it. */
function appMeta(declaration: McpToolDeclaration): Record<string, unknown> {
  const own = (declaration as { _meta?: Record<string, unknown> })._meta ?? {};
  return { ...own, ui: { resourceUri: CALL_APP_URI }, 'ui/resourceUri': CALL_APP_URI };
}

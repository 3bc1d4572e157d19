import { defineTool, ToolError } from '@baton/contracts';
import { z } from 'zod';

/**
 * The conformance fixture profile: the tools the official suite's server scenarios name, written
 * as Baton tools. They live under test/ only.
 */
const IMAGE =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const none = z.object({});
const content = (...blocks: unknown[]) => ({ content: blocks });

/** Waits `ms`, or until the call is cancelled. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export const conformanceTools = [
  defineTool({
    name: 'test_simple_text',
    description: 'Tests simple text content response',
    input: none,
    execute: async () => content({ type: 'text', text: 'This is a simple text response for testing.' }),
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Tests image content response',
    input: none,
    execute: async () => content({ type: 'image', data: IMAGE, mimeType: 'image/png' }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Tests audio content response',
    input: none,
    execute: async () => content({ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Tests embedded resource content response',
    input: none,
    execute: async () =>
      content({
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Tests response with multiple content types (text, image, resource)',
    input: none,
    execute: async () =>
      content(
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: IMAGE, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ),
  }),
  defineTool({
    name: 'test_tool_with_logging',
    description: 'Tests tool that emits log messages during execution',
    input: none,
    async execute(_args, ctx) {
      for (const line of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
        ctx.log('stdout', line);
        await sleep(50, ctx.signal);
      }
      return content({ type: 'text', text: 'Tool with logging executed successfully' });
    },
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Tests tool that reports progress notifications',
    input: none,
    async execute(_args, ctx) {
      for (const step of [0, 50, 100]) {
        ctx.progress({ current: step, total: 100, label: `Completed step ${step} of 100` });
        await sleep(50, ctx.signal);
      }
      return content({ type: 'text', text: 'progress reported' });
    },
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Tests error response handling',
    input: none,
    execute: async () => {
      throw new ToolError('This tool intentionally returns an error for testing');
    },
  }),
  defineTool({
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    input: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
    execute: async (args) =>
      content({ type: 'text', text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` }),
  }),
  defineTool({
    name: 'greet',
    description: 'Greets someone, at once',
    input: z.object({ name: z.string() }),
    execution: { mode: 'inline' },
    execute: async ({ name }) => `Hello, ${name}!`,
  }),
  defineTool({
    name: 'slow_compute',
    description: 'Sleeps for `seconds`, then answers; may run as a task',
    input: z.object({ seconds: z.number().min(0), label: z.string().optional() }),
    execution: { mode: 'auto' },
    async execute({ seconds, label }, ctx) {
      await sleep(seconds * 1_000, ctx.signal);
      return `${label ?? 'slow_compute'} finished after ${seconds} s`;
    },
  }),
  defineTool({
    name: 'failing_job',
    description: 'Fails with a tool error after about a second; runs only as a task',
    input: z.object({}).passthrough(),
    execution: { mode: 'background' },
    async execute(_args, ctx) {
      await sleep(1_000, ctx.signal);
      throw new ToolError('failing_job failed, as it always does');
    },
  }),
  defineTool({
    name: 'protocol_error_job',
    description: 'Breaks (not a tool error): the task fails with a JSON-RPC error',
    input: z.object({}).passthrough(),
    execution: { mode: 'background' },
    async execute(_args, ctx) {
      await sleep(200, ctx.signal);
      throw new Error('protocol_error_job broke');
    },
  }),
  defineTool({
    name: 'confirm_delete',
    description: 'Deletes a file once the user approves: the approval is an input request',
    input: z.object({ filename: z.string() }),
    execution: { mode: 'auto', needsApproval: true },
    execute: async ({ filename }) => `Deleted ${filename}`,
  }),
  defineTool({
    name: 'test_missing_capability',
    description: "Asks the client's model: a client that did not declare sampling gets -32021",
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const completion = await ctx.input({
        kind: 'sampling',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 20 },
      });
      return `completion: ${JSON.stringify(completion)}`;
    },
  }),
  defineTool({
    name: 'test_logging_tool',
    description: 'Logs a line, then answers',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      ctx.log('stdout', 'logging tool ran');
      return 'logged';
    },
  }),
  // Runs only as a task, and asks whose it is before it begins (tasks-mrtr-composition): its
  // `prepare` gathers the name in input rounds, then the task runs with it.
  defineTool({
    name: 'test_tool_with_task',
    description: 'Runs only as a task, for the user it asks for first',
    input: z.object({}).passthrough(),
    execution: { mode: 'background' },
    async prepare(_args, ctx) {
      const answer = await ctx.input(
        {
          kind: 'elicitation',
          message: 'Whose task is it?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
        { name: 'user_name' },
      );
      return { userName: answer.action === 'accept' ? String(answer.content?.name) : 'nobody' };
    },
    execute: async (_args, ctx) => `Task done for ${ctx.prepared.userName}`,
  }),
  defineTool({
    name: 'test_header_param',
    description: 'Echoes a region, which clients also send in the Mcp-Param-Region header (SEP-2243)',
    input: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
      required: ['region'],
    },
    execute: async ({ region }) => `region ${String(region)}`,
  }),
  // The tools that ask their caller for input while they run (`ctx.input`).
  defineTool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email',
    input: z.object({ message: z.string() }),
    async execute({ message }, ctx) {
      const answer = await ctx.input({
        kind: 'elicitation',
        message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  defineTool({
    name: 'test_sampling',
    description: "Asks the client's model to complete a prompt",
    input: z.object({ prompt: z.string() }),
    async execute({ prompt }, ctx) {
      const completion = await ctx.input({
        kind: 'sampling',
        params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
      });
      const content = completion.content as { text?: string } | undefined;
      return `LLM response: ${content?.text ?? JSON.stringify(completion)}`;
    },
  }),
  defineTool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Asks for a form whose fields all have defaults (SEP-1034)',
    input: z.object({}),
    async execute(_args, ctx) {
      const answer = await ctx.input({
        kind: 'elicitation',
        message: 'Please review your details',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', default: 'John Doe' },
            age: { type: 'integer', default: 30 },
            score: { type: 'number', default: 95.5 },
            status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
            verified: { type: 'boolean', default: true },
          },
        },
      });
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  defineTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Asks for a form with every kind of enum (SEP-1330)',
    input: z.object({}),
    async execute(_args, ctx) {
      const answer = await ctx.input({
        kind: 'elicitation',
        message: 'Please choose',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
        },
      });
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  // 2026-07-28's multi round-trip requests: the names are the keys the client sees.
  defineTool({
    name: 'test_input_required_result_elicitation',
    description: 'Asks for a name, then greets',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const answer = await ctx.input(askName, { name: 'user_name' });
      return `Hello, ${String(answer.content?.name)}!`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_sampling',
    description: "Asks the client's model a question",
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const completion = await ctx.input(
        {
          kind: 'sampling',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
            maxTokens: 100,
          },
        },
        { name: 'capital_question' },
      );
      return `Sampling response: ${(completion.content as { text?: string } | undefined)?.text ?? ''}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_list_roots',
    description: "Asks for the client's roots",
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const { roots } = await ctx.input({ kind: 'roots' }, { name: 'client_roots' });
      return `Roots: ${roots.map((root) => root.uri).join(', ')}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_request_state',
    description: 'Asks for a confirmation; the round that answers carries the state',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const answer = await ctx.input(
        {
          kind: 'elicitation',
          message: 'Please confirm',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
        { name: 'confirm' },
      );
      // The call that asked is the call that goes on: the state came back, or it could not.
      return `state-ok: confirmed=${String(answer.content?.ok)}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_multi_round',
    description: 'Asks twice, one round after the other',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const first = await ctx.input({ ...askName, message: 'Step 1: What is your name?' }, { name: 'step1' });
      const second = await ctx.input(
        {
          kind: 'elicitation',
          message: 'Step 2: What is your favorite color?',
          requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
        },
        { name: 'step2' },
      );
      return `${String(first.content?.name)} likes ${String(second.content?.color)}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks for a name, a greeting and the roots at once',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const [name, greeting, roots] = await Promise.all([
        ctx.input(askName, { name: 'user_name' }),
        ctx.input(
          {
            kind: 'sampling',
            params: {
              messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
              maxTokens: 50,
            },
          },
          { name: 'greeting' },
        ),
        ctx.input({ kind: 'roots' }, { name: 'client_roots' }),
      ]);
      const text = (greeting.content as { text?: string } | undefined)?.text ?? '';
      return `${text} ${String(name.content?.name)} (${roots.roots.length} roots)`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_tampered_state',
    description: 'Asks for a name; a round with a tampered state is refused',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const answer = await ctx.input(askName, { name: 'user_name' });
      return `Hello, ${String(answer.content?.name)}!`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_capabilities',
    description: 'Asks for a name and for a completion; the client answers what it can',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const [name, completion] = await Promise.allSettled([
        ctx.input(askName, { name: 'user_name' }),
        ctx.input(
          {
            kind: 'sampling',
            params: { messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 20 },
          },
          { name: 'greeting' },
        ),
      ]);
      return `name: ${name.status}, completion: ${completion.status}`;
    },
  }),
  defineTool({
    name: 'test_streaming_elicitation',
    description: 'Asks for a name while it runs',
    input: z.object({}).passthrough(),
    async execute(_args, ctx) {
      const answer = await ctx.input(askName, { name: 'user_name' });
      return `Hello, ${String(answer.content?.name)}!`;
    },
  }),
  defineTool({
    name: 'multi_input',
    description: 'Asks for a first and a last name at once; runs as a task',
    input: z.object({}).passthrough(),
    execution: { mode: 'background' },
    async execute(_args, ctx) {
      const ask = (field: string) =>
        ctx.input(
          {
            kind: 'elicitation',
            message: `Your ${field} name?`,
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
          { name: field },
        );
      const [first, last] = await Promise.all([ask('first'), ask('last')]);
      return `${String(first.content?.name)} ${String(last.content?.name)}`;
    },
  }),
];

/** The form that asks for a name. */
const askName = {
  kind: 'elicitation',
  message: 'What is your name?',
  requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
} as const;

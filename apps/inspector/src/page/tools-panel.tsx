import Form from '@rjsf/core';
import validator from '@rjsf/validator-ajv8';
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getJson, postJson, Unauthorized } from './api.js';

/** A tool as `/v1/tools` declares it (MCP's format). */
interface ToolDeclaration {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  execution?: { taskSupport?: string };
}

/** What the page gives the form library (a React component, run on preact/compat). */
interface SchemaFormProps {
  schema: Record<string, unknown>;
  validator: typeof validator;
  formData?: unknown;
  onChange?: (change: { formData?: unknown }) => void;
  onSubmit: (submitted: { formData?: unknown }) => void;
  uiSchema?: Record<string, unknown>;
  showErrorList?: false | 'top' | 'bottom';
  idPrefix?: string;
  noHtml5Validate?: boolean;
}
const SchemaForm = Form as unknown as ComponentType<SchemaFormProps>;

export interface ToolsPanelProps {
  connection: number;
  onUnauthorized: () => void;
  onError: (error: unknown) => void;
  /** A call was started: the page opens it and follows it live. */
  onStarted: (callId: string) => void;
}

/** The server's tools, each with its description and schema, and a form to run it from its JSON Schema. */
export function ToolsPanel({ connection, onUnauthorized, onError, onStarted }: ToolsPanelProps) {
  const [tools, setTools] = useState<ToolDeclaration[]>([]);
  const [open, setOpen] = useState<string>();
  const [sessionId, setSessionId] = useState('inspector');
  const [args, setArgs] = useState<Record<string, unknown>>({});

  useEffect(() => {
    getJson<ToolDeclaration[]>('/v1/tools?format=mcp')
      .then(setTools)
      .catch((error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error)));
  }, [connection, onUnauthorized, onError]);

  const run = (tool: ToolDeclaration, formData: unknown) => {
    const callId = crypto.randomUUID();
    // The reply comes at the call's end or at its inline budget; the page follows the call meanwhile.
    postJson('/v1/calls', { name: tool.name, args: formData ?? {}, sessionId, callId }).catch(onError);
    onStarted(callId);
  };

  return (
    <section class="tools" aria-label="Tools">
      <ul class="tool-list">
        {tools.map((tool) => (
          <li key={tool.name} data-tool={tool.name} class={open === tool.name ? 'open' : ''}>
            <div class="tool-head">
              {tool.title && tool.title !== tool.name ? (
                <>
                  <strong>{tool.title}</strong> <code>{tool.name}</code>
                </>
              ) : (
                <strong>
                  <code>{tool.name}</code>
                </strong>
              )}
              {tool.execution?.taskSupport && (
                <span class="muted" title="How MCP clients that take tasks may call it">
                  MCP task support: {tool.execution.taskSupport}
                </span>
              )}
              <button
                type="button"
                onClick={() => {
                  setArgs({});
                  setOpen(open === tool.name ? undefined : tool.name);
                }}
              >
                {open === tool.name ? 'Close' : 'Run'}
              </button>
            </div>
            <p class="muted">{tool.description}</p>
            {open === tool.name && (
              <div class="run-form">
                <label>
                  Session{' '}
                  <input value={sessionId} onInput={(event) => setSessionId(event.currentTarget.value)} />
                </label>
                <SchemaForm
                  schema={tool.inputSchema}
                  validator={validator}
                  formData={args}
                  idPrefix={`run-${tool.name}`}
                  showErrorList="top"
                  // The schema's own messages, from its validator, rather than the browser's.
                  noHtml5Validate
                  onChange={({ formData }) => setArgs((formData ?? {}) as Record<string, unknown>)}
                  onSubmit={({ formData }) => run(tool, formData)}
                  uiSchema={{ 'ui:submitButtonOptions': { submitText: `Run ${tool.name}` } }}
                />
                <details>
                  <summary>Input schema</summary>
                  <pre>{JSON.stringify(tool.inputSchema, null, 2)}</pre>
                </details>
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

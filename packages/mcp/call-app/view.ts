/**
 * The view of one background call, as an MCP App (`ui://baton/call.html`): the host renders it
 * inline in the conversation with the result of the tool call that went to the background, and
 * the view follows the call through the host (`check_background`), with its cancel and, for a
 * tool that takes messages, a message box (`cancel_background`, `steer_background`).
 */
import { App } from '@modelcontextprotocol/ext-apps/app-with-deps';

/** The package's version, put in by the view's build (tsup.view.config.ts). */
declare const BATON_VERSION: string;

/** How often the view asks how the call is: an editor's card, not a dashboard. */
const POLL_MS = 1_000;

interface CallStatus {
  call_id: string;
  tool: string;
  status: string;
  progress?: { current: number; total?: number; unit?: string; label?: string };
  status_text?: string;
  output_tail?: string;
  update?: unknown;
  update_seq?: number;
  result?: unknown;
  error?: string;
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
const app = new App({ name: 'baton-call', version: BATON_VERSION });
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
let callId: string | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** The call the tool result names: the acknowledgement's `_meta`, else its JSON's `call_id`. */
function callIdOf(result: { _meta?: Record<string, unknown>; content?: { type: string; text?: string }[] }) {
  const meta = result._meta?.['baton/call'] as { callId?: string } | undefined;
  if (typeof meta?.callId === 'string') return meta.callId;
  const first = result.content?.find((block) => block.type === 'text')?.text;
  try {
    const parsed = JSON.parse(first ?? '') as { call_id?: unknown };
    return typeof parsed.call_id === 'string' ? parsed.call_id : undefined;
  } catch {
    // Not JSON: a plain acknowledgement names the call in its words only.
    return /call_id[":\s]+([^\s",}]+)/.exec(first ?? '')?.[1];
  }
}

function show(status: CallStatus) {
  byId('tool').textContent = status.tool;
  const state = byId('state');
  state.textContent = status.status;
  state.dataset.status = status.status;
  const { progress } = status;
  const bar = byId<HTMLProgressElement>('progress');
  bar.hidden = progress === undefined;
  if (progress !== undefined) {
    bar.max = progress.total ?? 0;
    bar.value = progress.current;
    byId('progress-text').textContent = [
      progress.label,
      progress.total === undefined ? progress.current : `${progress.current}/${progress.total}`,
      progress.unit,
    ]
      .filter((part) => part !== undefined && part !== '')
      .join(' ');
  }
  byId('status-text').textContent = status.status_text ?? '';
  byId('update').textContent =
    status.update === undefined ? '' : `update ${status.update_seq}: ${text(status.update)}`;
  byId('log').textContent = status.output_tail ?? '';
  byId('end').textContent =
    status.status === 'succeeded' ? text(status.result) : status.error !== undefined ? status.error : '';
  const ended = ENDED.has(status.status);
  byId<HTMLButtonElement>('cancel').disabled = ended;
  byId<HTMLButtonElement>('send').disabled = ended;
}

async function poll() {
  if (callId === undefined) return;
  let result: Awaited<ReturnType<typeof app.callServerTool>>;
  try {
    result = await app.callServerTool({ name: 'check_background', arguments: { call_id: callId } });
  } catch (error) {
    // The host's connection to the server dropped (a restart, a deploy): the call goes on, and so do the looks.
    byId('end').textContent = `Reconnecting: ${error instanceof Error ? error.message : String(error)}`;
    timer = setTimeout(() => void poll(), POLL_MS);
    return;
  }
  byId('end').textContent = '';
  const first = result.content?.find((block) => block.type === 'text');
  if (result.isError || first?.type !== 'text') {
    byId('end').textContent = first?.type === 'text' ? first.text : 'The call could not be read.';
    return;
  }
  const status = JSON.parse(first.text) as CallStatus;
  show(status);
  if (!ENDED.has(status.status)) timer = setTimeout(() => void poll(), POLL_MS);
}

byId('cancel').addEventListener('click', async () => {
  if (callId === undefined) return;
  await app.callServerTool({ name: 'cancel_background', arguments: { call_id: callId } });
  clearTimeout(timer);
  await poll();
});
byId('send').addEventListener('click', async () => {
  const box = byId<HTMLInputElement>('message');
  if (callId === undefined || box.value === '') return;
  const sent = await app.callServerTool({
    name: 'steer_background',
    arguments: { call_id: callId, message: box.value },
  });
  const said = sent.content?.find((block) => block.type === 'text');
  byId('sent').textContent = sent.isError && said?.type === 'text' ? said.text : `sent: ${box.value}`;
  box.value = '';
});

app.ontoolresult = (result) => {
  callId = callIdOf(result as Parameters<typeof callIdOf>[0]);
  byId('call').textContent = callId ?? '';
  if (callId !== undefined) {
    void poll();
    return;
  }
  // A call that ended within its budget: its result is all there is to show.
  const said = result.content?.find((block) => block.type === 'text');
  show({
    call_id: '',
    tool: '',
    status: result.isError ? 'failed' : 'succeeded',
    ...(result.isError
      ? { error: said?.type === 'text' ? said.text : '' }
      : { result: said?.type === 'text' ? said.text : '' }),
  });
};
await app.connect();

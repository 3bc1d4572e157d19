import { readFile } from 'node:fs/promises';

/** The MCP App that shows one background call live: the host renders it beside the tool call. */
export const CALL_APP_URI = 'ui://baton/call.html';
/** MCP Apps' type for a view's page (`RESOURCE_MIME_TYPE` in `@modelcontextprotocol/ext-apps`). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** Where a result names the call its view follows. */
export const CALL_META_KEY = 'baton/call';

/** The view's script, built beside the package (`tsup.view.config.ts`); read once, when first asked for. */
let page: Promise<string> | undefined;

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; padding: 12px; color: #1b1f24; }
  header { display: flex; gap: 8px; align-items: baseline; }
  #tool { font-weight: 600; }
  #call { color: #57606a; font-size: 12px; }
  #state { margin-left: auto; padding: 1px 8px; border-radius: 10px; background: #ddf4ff; }
  #state[data-status="succeeded"] { background: #dafbe1; }
  #state[data-status="failed"], #state[data-status="timed_out"] { background: #ffebe9; }
  #state[data-status="cancelled"] { background: #eaeef2; }
  progress { width: 100%; }
  pre { background: #f6f8fa; padding: 6px; max-height: 8em; overflow: auto; white-space: pre-wrap; margin: 6px 0; }
  pre:empty { display: none; }
  footer { display: flex; gap: 6px; margin-top: 8px; }
  #message { flex: 1; }`;

const BODY = `
  <header><span id="tool"></span><span id="call"></span><span id="state">…</span></header>
  <progress id="progress" hidden></progress> <span id="progress-text"></span>
  <div id="status-text"></div>
  <pre id="update"></pre>
  <pre id="log"></pre>
  <pre id="end"></pre>
  <footer>
    <input id="message" placeholder="A message for the call" aria-label="A message for the call">
    <button id="send">Send</button>
    <button id="cancel">Cancel</button>
  </footer>
  <div id="sent"></div>`;

/** The view's page, its script inlined (a sandboxed frame loads nothing else). */
export function callAppPage(): Promise<string> {
  page ??= readFile(new URL('../dist/call-app/view.js', import.meta.url), 'utf8').then(
    // A `</script>` inside the script would end it early: break it up, as the HTML parser needs.
    (script) =>
      `<!doctype html><html><head><meta charset="utf-8"><title>Baton call</title><style>${STYLE}</style></head>` +
      `<body>${BODY}<script type="module">${script.replaceAll('</script', '<\\/script')}</script></body></html>`,
  );
  return page;
}

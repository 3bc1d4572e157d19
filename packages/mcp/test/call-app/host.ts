/**
 * A chat host's page for the call's MCP App, made of ext-apps' own host pieces: the view in a
 * sandboxed frame, an `AppBridge` to it over `postMessage`. The host's MCP connection is the
 * test's (Node's) client: the page reaches it through `callServerTool`, as a hosted chat reaches
 * its backend.
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

interface HostWindow {
  callServerTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<never>;
  showCall(page: string, toolInput: Record<string, unknown>, toolResult: unknown): Promise<void>;
}
const host = window as unknown as Window & HostWindow;

host.showCall = async (page, toolInput, toolResult) => {
  const frame = document.createElement('iframe');
  frame.sandbox.add('allow-scripts');
  frame.style.cssText = 'width: 520px; height: 340px; border: 1px solid #d0d7de; border-radius: 8px;';
  document.body.append(frame);
  const view = frame.contentWindow as Window;
  const bridge = new AppBridge(null, { name: 'test-host', version: '1.0.0' }, { serverTools: {} });
  bridge.oncalltool = (params) => host.callServerTool(params);
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(view, view));
  frame.srcdoc = page;
  await initialized;
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult as Parameters<typeof bridge.sendToolResult>[0]);
};

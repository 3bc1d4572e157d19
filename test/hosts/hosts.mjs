// The real hosts the suite drives, each at a pinned version from npm: how to point it at the
// scripted model and at Baton's MCP endpoint, headless, with its telemetry, updates and feedback off.

/** The pinned versions: the suite installs exactly these. */
export const PINNED = {
  '@anthropic-ai/claude-code': '2.1.328',
};

export const HOSTS = {
  claude: {
    package: '@anthropic-ai/claude-code',
    bin: 'claude',
    api: 'anthropic',
    run({ bin, modelUrl, mcpUrl, prompt, write }) {
      const config = write(
        'mcp.json',
        JSON.stringify({ mcpServers: { baton: { type: 'http', url: mcpUrl } } }),
      );
      return {
        command: bin,
        args: [
          '-p',
          prompt,
          '--mcp-config',
          config,
          '--strict-mcp-config',
          '--allowedTools',
          'mcp__baton__quick_lookup,mcp__baton__slow_lookup,mcp__baton__wait_background',
          '--output-format',
          'json',
        ],
        env: {
          ANTHROPIC_BASE_URL: modelUrl,
          ANTHROPIC_API_KEY: 'sk-scripted',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          // The MCP tools listed to the model as they are, not behind a tool search.
          ENABLE_TOOL_SEARCH: 'false',
        },
      };
    },
  },
};

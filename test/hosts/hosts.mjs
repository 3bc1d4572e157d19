// The real hosts the suite drives, each at a pinned version from npm: how to point it at the
// scripted model and at Baton's MCP endpoint, headless, with its telemetry, updates and feedback off.

/** The pinned versions: the suite installs exactly these. */
export const PINNED = {
  '@anthropic-ai/claude-code': '2.1.328',
  '@google/gemini-cli': '0.61.0',
  '@openai/codex': '0.169.0',
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
  gemini: {
    package: '@google/gemini-cli',
    bin: 'gemini',
    api: 'gemini',
    run({ bin, modelUrl, mcpUrl, prompt, write }) {
      write(
        '.gemini/settings.json',
        JSON.stringify({
          mcpServers: { baton: { httpUrl: mcpUrl, trust: true } },
          telemetry: { enabled: false },
          privacy: { usageStatisticsEnabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
          security: { auth: { selectedType: 'gemini-api-key' } },
        }),
      );
      return {
        command: bin,
        args: ['-p', prompt, '--output-format', 'json', '--yolo'],
        env: {
          GEMINI_API_KEY: 'scripted',
          GOOGLE_GEMINI_BASE_URL: modelUrl,
          GEMINI_CLI_TRUST_WORKSPACE: 'true',
        },
      };
    },
  },
  codex: {
    package: '@openai/codex',
    bin: 'codex',
    api: 'responses',
    run({ bin, modelUrl, mcpUrl, prompt, write }) {
      write(
        '.codex/config.toml',
        [
          'model = "scripted"',
          'model_provider = "scripted"',
          'approval_policy = "never"',
          'check_for_update_on_startup = false',
          '[analytics]',
          'enabled = false',
          '[feedback]',
          'enabled = false',
          '[model_providers.scripted]',
          'name = "scripted"',
          `base_url = "${modelUrl}/v1"`,
          'wire_api = "responses"',
          'env_key = "SCRIPTED_API_KEY"',
          '[mcp_servers.baton]',
          `url = "${mcpUrl}"`,
          // codex exec asks no one: the server's tools are approved.
          'default_tools_approval_mode = "approve"',
          '',
        ].join('\n'),
      );
      return {
        command: bin,
        args: ['exec', '--skip-git-repo-check', '--json', prompt],
        env: { SCRIPTED_API_KEY: 'scripted' },
      };
    },
  },
};

import { memoryStore } from '@baton/runtime/testing';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { demoTools } from '../src/demo-tools.js';
import { runtimeFor } from '../src/served-runtime.js';
import { userSegmentOf } from '../src/tenancy.js';

describe('the runtime a server with OAuth runs', () => {
  it('takes the longest id an OAuth user may give, under the longest tenant name and its user segment', async () => {
    const config = loadConfig(
      { BATON_OAUTH_ISSUER: 'https://issuer.example', BATON_OAUTH_RESOURCE: 'https://baton.example/' },
      '/nonexistent',
    );
    const runtime = runtimeFor({ tools: demoTools }, config, {
      init: false,
      log: pino({ level: 'silent' }),
      role: 'both',
      store: memoryStore(),
    });
    try {
      const prefix = `${'t'.repeat(64)}/${userSegmentOf('alice')}`;
      const reply = await runtime.call({
        name: 'echo',
        args: { text: 'x' },
        sessionId: `${prefix}${'s'.repeat(128)}`,
        callId: `${prefix}${'c'.repeat(128)}`,
      });
      expect(reply.status).toBe('succeeded');
    } finally {
      await runtime.close();
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { environmentWith, parseFlags } from '../src/flags.js';
import { redactedLocation } from '../src/redacted-location.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withFile(content: object | string): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('the server configuration', () => {
  it('has defaults: loopback, port 8787, SQLite in ./.baton, no tokens', () => {
    expect(loadConfig({}, dir)).toEqual({
      host: '127.0.0.1',
      port: 8787,
      storePath: './.baton/baton.db',
      inlineBudgetMs: 300,
      drainMs: 30_000,
      role: 'both',
      limits: {},
      tokens: {},
      operatorTokens: [],
    });
  });

  it('reads baton.config.json from the working directory, and the environment wins over it', () => {
    const file = withFile({
      port: 9000,
      inlineBudgetMs: 500,
      limits: { concurrency: 8 },
      tokens: { 'a-token-of-16-chars': 'acme' },
      host: '0.0.0.0',
    });
    const config = loadConfig({ BATON_CONFIG: file, BATON_PORT: '9001' });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9001,
      inlineBudgetMs: 500,
      limits: { concurrency: 8 },
    });
    expect(loadConfig({ BATON_CONFIG: file, BATON_TOKENS: 'bolt:another-token-16-chars' }).tokens).toEqual({
      'another-token-16-chars': 'bolt',
    });
  });

  it('stops on a bad field, naming it, in the file or in the environment', () => {
    expect(() => loadConfig({ BATON_CONFIG: withFile({ port: 'eighty' }) })).toThrow(/: port: /);
    expect(() => loadConfig({ BATON_CONFIG: withFile({ prot: 80 }) })).toThrow(/Unrecognized key: "prot"/);
    expect(() => loadConfig({ BATON_CONFIG: withFile({ limits: { concurrency: 0 } }) })).toThrow(
      /limits\.concurrency: /,
    );
    expect(() => loadConfig({ BATON_CONFIG: withFile('{ nope') })).toThrow(/not JSON/);
    expect(() => loadConfig({ BATON_CONFIG: join(dir, 'missing.json') })).toThrow(
      /BATON_CONFIG: .* does not exist/,
    );
    expect(() => loadConfig({ BATON_TOKENS: 'acme:short' })).toThrow(/^bad configuration: BATON_TOKENS: /);
    expect(() => loadConfig({ BATON_OPERATOR_TOKENS: 'short' })).toThrow(
      /^bad configuration: BATON_OPERATOR_TOKENS\.0: a token needs at least 16 characters/,
    );
    expect(
      loadConfig({ BATON_OPERATOR_TOKENS: 'operator-token-0001, operator-token-0002' }, dir).operatorTokens,
    ).toEqual(['operator-token-0001', 'operator-token-0002']);
    expect(() => loadConfig({ BATON_BUILTINS: 'wait_background,sleep_forever' })).toThrow(
      /^bad configuration: BATON_BUILTINS\.1: /,
    );
    expect(loadConfig({ BATON_BUILTINS: 'wait_background, check_background' }).builtins).toEqual([
      'wait_background',
      'check_background',
    ]);
  });

  it('listens on loopback only when it has no tokens', () => {
    expect(() => loadConfig({ BATON_HOST: '0.0.0.0' }, dir)).toThrow(
      'bad configuration: host: 0.0.0.0 is not a loopback address; without tokens the server has no authentication and listens on loopback only',
    );
    expect(loadConfig({ BATON_HOST: '::1' }, dir).host).toBe('::1');
    expect(loadConfig({ BATON_HOST: '0.0.0.0', BATON_TOKENS: 'acme:a-token-of-16-chars' }, dir).host).toBe(
      '0.0.0.0',
    );
  });

  it('refuses to start with a placeholder secret, as the compose file’s example once had', () => {
    expect(() => loadConfig({ BATON_TOKENS: 'acme:change-me-to-a-long-token' }, dir)).toThrow(
      /the token of acme is a placeholder/,
    );
    expect(() => loadConfig({ BATON_OPERATOR_TOKENS: 'change-me-operator-token' }, dir)).toThrow(
      /an operator token is a placeholder/,
    );
    expect(() =>
      loadConfig({ BATON_CONFIG: withFile({ tokens: { 'REPLACE_ME-with-a-real-token': 'acme' } }) }),
    ).toThrow(/placeholder/);
  });

  it('reads a secret from the file BATON_X_FILE names, as a container’s secrets are given', () => {
    const tokens = join(dir, 'tokens');
    writeFileSync(tokens, 'acme:a-token-from-a-secret-file\n');
    expect(loadConfig({ BATON_TOKENS_FILE: tokens }, dir).tokens).toEqual({
      'a-token-from-a-secret-file': 'acme',
    });
    expect(() =>
      loadConfig({ BATON_TOKENS_FILE: tokens, BATON_TOKENS: 'acme:another-token-16' }, dir),
    ).toThrow('bad configuration: BATON_TOKENS and BATON_TOKENS_FILE are both set: give one');
    expect(() => loadConfig({ BATON_TOKENS_FILE: join(dir, 'nowhere') }, dir)).toThrow(
      /^bad configuration: BATON_TOKENS_FILE: ENOENT/,
    );
  });

  it('takes the OAuth switches the README names: an issuer without at+jwt, and its timeout', () => {
    const oauth = {
      issuer: 'https://auth.example.com/realms/agents',
      resource: 'https://baton.example.com/',
      requireAccessTokenType: false,
      issuerTimeoutMs: 2_000,
    };
    expect(loadConfig({ BATON_CONFIG: withFile({ oauth }) }).oauth).toMatchObject({
      requireAccessTokenType: false,
      issuerTimeoutMs: 2_000,
    });
  });

  it('takes the public URL and whether to trust a proxy’s forwarded headers', () => {
    expect(
      loadConfig({ BATON_PUBLIC_URL: 'https://baton.example', BATON_TRUST_PROXY: 'true' }, dir),
    ).toMatchObject({ publicUrl: 'https://baton.example', trustProxy: true });
  });
});

describe('the store location as the banner shows it', () => {
  it.each([
    ['postgres://baton:s3cret@db:5432/baton', 'postgres://***@db:5432/baton'],
    ['postgres://db/baton?user=baton&password=s3cret', 'postgres://db/baton?user=baton&password=***'],
    [
      'postgresql://u@db/b?sslkey=/k.pem&sslpassword=s3cret',
      'postgresql://***@db/b?sslkey=***&sslpassword=***',
    ],
    ['./.baton/baton.db', './.baton/baton.db'],
    ['postgres://bad url with s3cret', 'postgres://***'],
  ])('shows %s as %s', (location, shown) => {
    expect(redactedLocation(location)).toBe(shown);
    expect(redactedLocation(location)).not.toContain('s3cret');
  });
});

describe('the hosts and origins browsers may use', () => {
  it('reads them from the file and from comma lists in the environment, which win', () => {
    const file = withFile({ allowedHosts: ['baton.local'], allowedOrigins: ['https://a.example.com'] });
    expect(loadConfig({ BATON_CONFIG: file })).toMatchObject({
      allowedHosts: ['baton.local'],
      allowedOrigins: ['https://a.example.com'],
    });
    expect(
      loadConfig({
        BATON_CONFIG: file,
        BATON_ALLOWED_HOSTS: 'x.local, y.local',
        BATON_ALLOWED_ORIGINS: 'https://b.example.com',
      }),
    ).toMatchObject({ allowedHosts: ['x.local', 'y.local'], allowedOrigins: ['https://b.example.com'] });
    expect(loadConfig({}, dir).allowedHosts).toBeUndefined();
    expect(() => loadConfig({ BATON_ALLOWED_ORIGINS: 'not a url' })).toThrow(/BATON_ALLOWED_ORIGINS/);
  });
});

describe('retention', () => {
  it('is read from the file and the environment, and is 0 or more days', () => {
    expect(loadConfig({ BATON_CONFIG: withFile({ retentionDays: 30 }) }).retentionDays).toBe(30);
    expect(loadConfig({ BATON_RETENTION_DAYS: '0' }, dir).retentionDays).toBe(0);
    expect(() => loadConfig({ BATON_RETENTION_DAYS: '-1' }, dir)).toThrow(/BATON_RETENTION_DAYS/);
  });
});

describe("a client's pushback", () => {
  it('takes the wait for a claim and the bounds on calls waiting for workers from the file and the environment, which wins', () => {
    const file = withFile({
      claimWaitMs: 4_000,
      limits: { waitingForWorkers: 50, waitingForWorkersPerTenant: 20 },
    });
    expect(loadConfig({ BATON_CONFIG: file })).toMatchObject({
      claimWaitMs: 4_000,
      limits: { waitingForWorkers: 50, waitingForWorkersPerTenant: 20 },
    });
    expect(
      loadConfig({ BATON_CONFIG: file, BATON_CLAIM_WAIT_MS: '2000', BATON_WAITING_FOR_WORKERS: '80' }),
    ).toMatchObject({
      claimWaitMs: 2_000,
      limits: { waitingForWorkers: 80, waitingForWorkersPerTenant: 20 },
    });
    expect(() => loadConfig({ BATON_WAITING_FOR_WORKERS: '0' }, dir)).toThrow(/BATON_WAITING_FOR_WORKERS/);
  });
});

describe('MCP background control', () => {
  it('is on unless the file or BATON_MCP_BACKGROUND_CONTROL turns it off; the environment wins', () => {
    expect(loadConfig({}, dir).mcp).toBeUndefined();
    const off = withFile({ mcp: { backgroundControl: false, sessions: 10 } });
    expect(loadConfig({ BATON_CONFIG: off }).mcp).toEqual({ backgroundControl: false, sessions: 10 });
    expect(loadConfig({ BATON_CONFIG: off, BATON_MCP_BACKGROUND_CONTROL: 'true' }).mcp).toEqual({
      backgroundControl: true,
      sessions: 10,
    });
    expect(loadConfig({ BATON_MCP_BACKGROUND_CONTROL: 'false' }, dir).mcp).toEqual({
      backgroundControl: false,
    });
    expect(() => loadConfig({ BATON_MCP_BACKGROUND_CONTROL: 'maybe' }, dir)).toThrow(
      /^bad configuration: BATON_MCP_BACKGROUND_CONTROL: /,
    );
  });
});

describe('the A2A agent', () => {
  it('is on unless the file or BATON_A2A turns it off; the environment wins', () => {
    expect(loadConfig({}, dir).a2a).toBeUndefined();
    const off = withFile({ a2a: false });
    expect(loadConfig({ BATON_CONFIG: off }).a2a).toBe(false);
    expect(loadConfig({ BATON_CONFIG: off, BATON_A2A: 'true' }).a2a).toBe(true);
    expect(() => loadConfig({ BATON_A2A: 'maybe' }, dir)).toThrow(/^bad configuration: BATON_A2A: /);
  });
});

describe('the quotas', () => {
  it('come from the file, a tenant’s by name, and from the flag or the environment, which win', () => {
    expect(loadConfig({}, dir).quotas).toBeUndefined();
    const file = withFile({ quotas: { callsPerMinute: 600, tenants: { acme: { callsPerMinute: 6_000 } } } });
    expect(loadConfig({ BATON_CONFIG: file }).quotas).toEqual({
      callsPerMinute: 600,
      tenants: { acme: { callsPerMinute: 6_000 } },
    });
    const { values } = parseFlags(['--quota-calls-per-minute', '60']);
    expect(loadConfig(environmentWith(values, { BATON_CONFIG: file })).quotas?.callsPerMinute).toBe(60);
    expect(() => loadConfig({ BATON_QUOTA_CALLS_PER_MINUTE: '0' }, dir)).toThrow(
      /^bad configuration: BATON_QUOTA_CALLS_PER_MINUTE: /,
    );
    expect(() => loadConfig({ BATON_CONFIG: withFile({ quotas: { tenants: { 'a b': {} } } }) })).toThrow(
      /quotas\.tenants/,
    );
  });
});

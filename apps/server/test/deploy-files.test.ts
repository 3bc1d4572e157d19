import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { createRuntime } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

// A CommonJS module whose types say `export default`: required as it is written.
const dockerignore = createRequire(import.meta.url)(
  '@balena/dockerignore',
) as typeof import('@balena/dockerignore')['default'];

// No container can be built here (the machines reach only the npm and Debian registries, so a
// build stops at `FROM node:24-slim`): these are the checks closest to one, on the files as shipped.
const deploy = (name: string) => readFileSync(new URL(`../deploy/${name}`, import.meta.url), 'utf8');
const dockerfile = deploy('Dockerfile');

describe('the image', () => {
  it('keeps the configuration, the store, node_modules and .git out of its build context', () => {
    const ignored = dockerignore().add(deploy('Dockerfile.dockerignore'));
    const project = [
      'package.json',
      'package-lock.json',
      'tools.js',
      'src/search.js',
      'Dockerfile',
      'baton.config.json',
      '.baton/baton.db',
      '.baton/baton.db-wal',
      'data/calls.db',
      'node_modules/@baton/server/package.json',
      '.git/HEAD',
      '.env',
      '.env.production',
      'secrets/baton_tokens',
    ];
    expect(ignored.filter(project)).toEqual([
      'package.json',
      'package-lock.json',
      'tools.js',
      'src/search.js',
      'Dockerfile',
    ]);
  });

  it('runs under an init, and its health check asks the port the server was configured with', async () => {
    expect(dockerfile).toMatch(/^ENTRYPOINT \["tini", "--", "node", /m);
    const check = /^HEALTHCHECK .*\n\s+CMD \["node", "-e", "(.*)"\]$/m.exec(dockerfile)?.[1];
    expect(check).toBeDefined();
    const script = JSON.parse(`"${check}"`) as string;
    const runtime = createRuntime({ tools: demoTools });
    const app = createServer({ runtime });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const run = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, ['-e', script], { env: { ...process.env, ...env } }).then(
        () => 0,
        (failed: { code?: number }) => failed.code ?? 1,
      );
    try {
      expect(await run({ BATON_PORT: String(port) })).toBe(0);
      expect(await run({ BATON_WORKER_PORT: String(port), BATON_PORT: '1' })).toBe(0);
      expect(await run({ BATON_PORT: '1' })).toBe(1);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});

describe('the compose file', () => {
  type Service = {
    read_only?: boolean;
    cap_drop?: string[];
    security_opt?: string[];
    environment?: Record<string, string>;
    secrets?: string[];
    healthcheck?: { test: unknown };
    depends_on?: Record<string, { condition: string }>;
  };
  let services: Record<string, Service>;
  let secrets: Record<string, { file: string }>;
  beforeAll(() => {
    ({ services, secrets } = parse(deploy('compose.yaml'), { merge: true }) as {
      services: Record<string, Service>;
      secrets: Record<string, { file: string }>;
    });
  });
  afterAll(() => undefined);

  it('runs Baton read-only, with no capabilities and no new privileges, once the database is healthy', () => {
    expect(services.db?.healthcheck?.test).toEqual(['CMD-SHELL', 'pg_isready -U baton -d baton']);
    for (const name of ['api', 'worker']) {
      const service = services[name] as Service;
      expect(service).toMatchObject({
        read_only: true,
        cap_drop: ['ALL'],
        security_opt: ['no-new-privileges:true'],
        depends_on: { db: { condition: 'service_healthy' } },
      });
    }
  });

  it('gives every credential as a secret file, none as an environment value', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        if (/TOKEN|PASSWORD|SECRET|STORE/.test(variable)) {
          expect(variable, `${name}: ${variable}`).toMatch(/_FILE$/);
          expect(value).toMatch(/^\/run\/secrets\//);
          expect(service.secrets).toContain(value.slice('/run/secrets/'.length));
        }
      }
      for (const secret of service.secrets ?? []) expect(secrets[secret]?.file).toMatch(/^\.\/secrets\//);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, REDACTED, redactedArgs, secretPathsOf, withSecretArgsRedacted } from '../src/index.js';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys with a key of the caller’s',
  input: z.object({
    service: z.string(),
    apiKey: z.string().meta({ writeOnly: true }),
    auth: z.object({ user: z.string(), password: z.string().meta({ writeOnly: true }) }).optional(),
    hosts: z.array(z.object({ name: z.string(), token: z.string().meta({ writeOnly: true }) })).default([]),
  }),
  execute: () => 'deployed',
});

describe('secret arguments: marked writeOnly in the input schema, redacted wherever a call is shown', () => {
  it('finds each argument the schema marks writeOnly, through objects and arrays', () => {
    expect(deploy.secretArgs).toEqual([['apiKey'], ['auth', 'password'], ['hosts', '*', 'token']]);
  });

  it('follows local $refs and alternatives of a JSON Schema given as is', () => {
    const schema = {
      type: 'object',
      properties: {
        login: { $ref: '#/$defs/login' },
        key: { anyOf: [{ type: 'string', writeOnly: true }, { type: 'null' }] },
      },
      $defs: { login: { type: 'object', properties: { secret: { type: 'string', writeOnly: true } } } },
    } as const;
    expect(secretPathsOf(schema)).toEqual([['login', 'secret'], ['key']]);
  });

  it('shows a copy with each secret redacted, leaving the rest and the original as they were', () => {
    const args = {
      service: 'web',
      apiKey: 'sk-live-0001',
      auth: { user: 'ada', password: 'hunter2' },
      hosts: [
        { name: 'a', token: 't-a' },
        { name: 'b', token: 't-b' },
      ],
    };
    const record = { callId: 'c1', toolName: 'deploy', args };
    const shown = withSecretArgsRedacted({ get: () => deploy }, record);
    expect(shown.args).toEqual({
      service: 'web',
      apiKey: REDACTED,
      auth: { user: 'ada', password: REDACTED },
      hosts: [
        { name: 'a', token: REDACTED },
        { name: 'b', token: REDACTED },
      ],
    });
    expect(record.args.apiKey).toBe('sk-live-0001');
  });

  it('leaves arguments that lack a secret field, or are not objects, as they are', () => {
    expect(redactedArgs({ service: 'web' }, deploy.secretArgs ?? [])).toEqual({ service: 'web' });
    expect(redactedArgs('not an object', deploy.secretArgs ?? [])).toBe('not an object');
    const record = { toolName: 'unknown', args: { apiKey: 'k' } };
    expect(withSecretArgsRedacted({ get: () => undefined }, record)).toBe(record);
  });
});

import { readFileSync } from 'node:fs';

/** A value written to be replaced: the placeholders of examples and compose files. */
const PLACEHOLDER = /change[-_ ]?me|replace[-_ ]?me/i;

/**
 * The environment with each `BATON_X_FILE` read into `BATON_X`: how a container's secrets
 * (`/run/secrets/…`) reach the server without being environment values anyone can read in
 * `docker inspect`. A variable given both ways, or a file that cannot be read, stops the start.
 */
export function withSecretFiles(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv } | { problem: string } {
  const read: NodeJS.ProcessEnv = { ...env };
  for (const [name, path] of Object.entries(env)) {
    if (!name.startsWith('BATON_') || !name.endsWith('_FILE') || path === undefined) continue;
    const variable = name.slice(0, -'_FILE'.length);
    if (env[variable] !== undefined) {
      return { problem: `bad configuration: ${variable} and ${name} are both set: give one` };
    }
    try {
      read[variable] = readFileSync(path, 'utf8').trim();
    } catch (error) {
      return { problem: `bad configuration: ${name}: ${(error as Error).message}` };
    }
    delete read[name];
  }
  return { env: read };
}

/** The secrets of a configuration, wherever they are set. */
interface ConfiguredSecrets {
  tokens: Record<string, string>;
  operatorTokens: readonly string[];
  webhook?: { secret: string };
  oauth?: { introspection?: { clientSecret: string } };
  tenantWebhooks?: Record<string, { secret: string }>;
}

/**
 * Why the configuration cannot start a server: a token or secret that is still a placeholder
 * (`change-me…`), which anyone who read the example knows. Undefined when none is.
 */
export function placeholderProblem(config: ConfiguredSecrets): string | undefined {
  const secrets: Array<[string, string | undefined]> = [
    ...Object.entries(config.tokens).map(([token, tenant]): [string, string] => [
      `the token of ${tenant}`,
      token,
    ]),
    ...config.operatorTokens.map((token): [string, string] => ['an operator token', token]),
    ['the webhook secret', config.webhook?.secret],
    ['the OAuth introspection secret', config.oauth?.introspection?.clientSecret],
    ...Object.entries(config.tenantWebhooks ?? {}).map(([tenant, { secret }]): [string, string] => [
      `the webhook secret of ${tenant}`,
      secret,
    ]),
  ];
  const placeholder = secrets.find(([, value]) => value !== undefined && PLACEHOLDER.test(value));
  return (
    placeholder &&
    `bad configuration: ${placeholder[0]} is a placeholder (it says "change me"): set a secret of your own, e.g. \`openssl rand -base64 32\``
  );
}

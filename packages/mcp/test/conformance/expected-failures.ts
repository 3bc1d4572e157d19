/**
 * The scenarios Baton does not pass, each with why. The run fails when another scenario fails, and
 * when one of these passes again (then it leaves this list).
 */

/**
 * Not offered by design: Baton serves tools (and, as its one resource, the MCP App of a background
 * call); these methods answer -32601, or the scenario's own resources are not there.
 */
const NOT_OFFERED = [
  'completion-complete',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
];

export const EXPECTED_FAILURES: Record<string, readonly string[]> = {
  '2025-11-25': [...NOT_OFFERED, 'resources-subscribe', 'resources-unsubscribe'],
  '2026-07-28': [
    ...NOT_OFFERED,
    // Its tools/list check passes; its prompts and resources checks get -32601, as Baton offers
    // neither (the issue keeps them not offered, which this scenario cannot see).
    'caching',
    // Its input-required check is on prompts/get, and Baton offers no prompts.
    'input-required-result-non-tool-request',
  ],
};

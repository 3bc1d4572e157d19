/**
 * The scenarios Baton does not pass, each with why. The run fails when another scenario fails, and
 * when one of these passes again (then it leaves this list).
 */

/** Not offered by design: Baton serves tools; these methods answer -32601. */
const NOT_OFFERED = [
  'completion-complete',
  'resources-list',
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
    // Its prompts and resources checks: their list results carry no caching hints, as there are none.
    'caching',
    // Not yet (issue 13): a tool cannot ask for input by multi-round-trip requests (MRTR), nor fan
    // out several input requests in one task (server-stateless needs such tools too).
    'server-stateless',
    'input-required-result-basic-elicitation',
    'input-required-result-basic-sampling',
    'input-required-result-basic-list-roots',
    'input-required-result-request-state',
    'input-required-result-multiple-input-requests',
    'input-required-result-multi-round',
    'input-required-result-non-tool-request',
    'input-required-result-result-type',
    'input-required-result-tampered-state',
    'input-required-result-capability-check',
    'tasks-mrtr-input',
    'tasks-mrtr-composition',
  ],
};

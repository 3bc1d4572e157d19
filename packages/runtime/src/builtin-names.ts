/** The names of the tools the runtime itself offers, when `createRuntime({ builtins })` names them. */

/** The tools a model follows its background calls with; each sees only its own session's calls. */
export const BACKGROUND_CONTROL = [
  'check_background',
  'wait_background',
  'cancel_background',
  'list_background',
  'steer_background',
] as const;
export type BackgroundControlTool = (typeof BACKGROUND_CONTROL)[number];

/** Starts a tool as a labelled background run of the session, now or on a schedule. */
export const SPAWN_BACKGROUND = 'spawn_background';

/** Every tool the runtime itself offers, when `builtins` names it. */
export const BUILTIN_TOOLS = [SPAWN_BACKGROUND, ...BACKGROUND_CONTROL] as const;

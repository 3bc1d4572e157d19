/** Every default, limit and model-facing text of the contracts, in one place. */

/** Tool names as the providers accept them (OpenAI, Anthropic and Gemini share this rule). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** Arguments larger than this, serialised as JSON, are refused with `invalid_arguments`. */
export const DEFAULT_MAX_ARGS_BYTES = 1024 * 1024;

/** The background continuation: the inline budget after which an `auto` call continues in the background. */
export const DEFAULT_INLINE_BUDGET_MS = 300;

/** The background runs: what the model is told when a tool fails in a way it should not see the details of. */
export const INTERNAL_ERROR_MESSAGE = 'An internal error occurred while executing the tool';

/** Arguments nested deeper than this (objects and arrays) are refused with `invalid_arguments`. */
export const DEFAULT_MAX_ARGS_DEPTH = 64;

/**
 * A request body nested deeper than this is refused before it is parsed: the arguments' own limit,
 * with room for the request around them (a body deeper than that could only be refused later,
 * once parsing had cost what a hostile body makes it cost).
 */
export const DEFAULT_MAX_BODY_DEPTH = DEFAULT_MAX_ARGS_DEPTH + 16;

/**
 * A request body with more object keys and nested values (objects and arrays) than this is refused
 * before it is parsed: tens of thousands of keys cost a parser many times their bytes.
 */
export const DEFAULT_MAX_BODY_KEYS = 10_000;

/** The longest id Baton takes: call, session and message ids, and tool names in requests. */
export const MAX_ID_CHARS = 128;

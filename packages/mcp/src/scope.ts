import { uuidv7 } from 'uuidv7';

/**
 * Whose calls a request may see. Ids inside the runtime carry the tenant's prefix; ids shown to the
 * client do not. A tenant's task ids never resolve for another tenant: a lookup of someone else's
 * task finds nothing, as if it never was.
 */
export interface McpScope {
  /** Undefined for the one tenant of a server without tokens. */
  readonly tenant: string | undefined;
  /** The id the runtime keeps for an id this tenant gave. */
  inside(id: string): string;
  /** The id this tenant sees for an id the runtime keeps. */
  outside(id: string): string;
  /** A new call id, made inside the scope. */
  newCallId(): string;
}

/** The scope of a server with one tenant: ids are kept as they are given. */
export const SINGLE_TENANT: McpScope = {
  tenant: undefined,
  inside: (id) => id,
  outside: (id) => id,
  newCallId: () => uuidv7(),
};

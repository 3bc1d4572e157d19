import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The `tasks/list` cursors a client is given: the store's own, sealed with an HMAC over the tenant
 * and the cursor, so that a cursor this endpoint did not give (a forged `"1"`, another tenant's) is
 * refused instead of read.
 */
export interface Cursors {
  seal(tenant: string | undefined, cursor: string): string;
  /** The store's cursor, or undefined when this endpoint did not give this one to this tenant. */
  open(tenant: string | undefined, sealed: string): string | undefined;
}

export function cursorSeal(key: Uint8Array | string): Cursors {
  const macOf = (tenant: string | undefined, cursor: string) =>
    createHmac('sha256', key)
      .update(`tasks/list\0${tenant ?? ''}\0${cursor}`)
      .digest()
      .subarray(0, 16);
  return {
    seal: (tenant, cursor) => `${cursor}.${macOf(tenant, cursor).toString('base64url')}`,
    open(tenant, sealed) {
      const dot = sealed.lastIndexOf('.');
      if (dot < 0) return undefined;
      const cursor = sealed.slice(0, dot);
      const given = Buffer.from(sealed.slice(dot + 1), 'base64url');
      const expected = macOf(tenant, cursor);
      return given.length === expected.length && timingSafeEqual(given, expected) ? cursor : undefined;
    },
  };
}

/**
 * The open call lives in the page's address (`#/calls/<id>`): a reload keeps it, and the address
 * can be shared with anyone who can open the inspector.
 */
const PREFIX = '#/calls/';

export function callIdInAddress(): string | undefined {
  const { hash } = window.location;
  if (!hash.startsWith(PREFIX)) return undefined;
  const callId = decodeURIComponent(hash.slice(PREFIX.length));
  return callId === '' ? undefined : callId;
}

/** The address of a call, or of no call. */
export function addressOf(callId: string | undefined): string {
  return callId === undefined
    ? window.location.pathname + window.location.search
    : `${PREFIX}${encodeURIComponent(callId)}`;
}

const SESSIONS = '#/sessions/';

/** A session's page (`#/sessions/<id>`): its calls and the notifications its model is given. */
export function sessionIdInAddress(): string | undefined {
  const { hash } = window.location;
  if (!hash.startsWith(SESSIONS)) return undefined;
  const sessionId = decodeURIComponent(hash.slice(SESSIONS.length));
  return sessionId === '' ? undefined : sessionId;
}

export function sessionAddress(sessionId: string): string {
  return `${SESSIONS}${encodeURIComponent(sessionId)}`;
}

import { describe, expect, it } from 'vitest';
import {
  BatonError,
  connectionRequired,
  defaultResultFormatter,
  isBatonError,
  isConnectionRequired,
  isToolError,
  isToolSuccess,
  success,
  ToolError,
} from '../src/index.js';

describe('results, errors and their brands', () => {
  it('recognises markers made by another copy of the package (Symbol.for brands, not instanceof)', () => {
    const foreignBrand: unique symbol = Symbol.for('baton.tool-error') as never;
    class ForeignToolError extends Error {
      readonly [foreignBrand] = true;
    }
    expect(isToolError(new ForeignToolError('x'))).toBe(true);
    expect(isToolError(new Error('x'))).toBe(false);
    expect(isToolError(new ToolError('x'))).toBe(true);
    expect(isToolSuccess({ [Symbol.for('baton.tool-result')]: 'success', value: 1 })).toBe(true);
    expect(isBatonError({ [Symbol.for('baton.error')]: true, code: 'closed' })).toBe(true);
  });

  it('builds successes with images and raw output, and connection-required results', () => {
    const result = success(
      { n: 1 },
      { images: [{ base64: 'AA==', mediaType: 'image/png' }], rawOutput: 'raw' },
    );
    expect(isToolSuccess(result)).toBe(true);
    expect(result).toMatchObject({ value: { n: 1 }, rawOutput: 'raw' });
    expect(isConnectionRequired(connectionRequired('github'))).toBe(true);
    expect(isConnectionRequired(result)).toBe(false);
  });

  it('BatonError.fromUnknown keeps a BatonError and wraps anything else as its cause', () => {
    const original = new BatonError('limit_exceeded', 'full');
    expect(BatonError.fromUnknown(original)).toBe(original);
    const wrapped = BatonError.fromUnknown('boom');
    expect(wrapped).toMatchObject({ code: 'internal_error', message: 'boom', cause: 'boom' });
  });

  it("formats replies in the result scheduling's shapes", () => {
    const call = { callId: 'fc_123', toolName: 'search', args: { query: 'test' } };
    expect(defaultResultFormatter.running(call)).toEqual({
      status: 'running',
      tool: 'search',
      call_id: 'fc_123',
    });
    expect(defaultResultFormatter.result(call, { ok: true, value: { items: [1, 2, 3] } })).toEqual({
      status: 'completed',
      tool: 'search',
      result: { items: [1, 2, 3] },
    });
    expect(
      defaultResultFormatter.result(call, {
        ok: false,
        error: { code: 'tool_error', message: 'connection timeout' },
      }),
    ).toEqual({ status: 'error', tool: 'search', error: 'connection timeout' });
    expect(defaultResultFormatter.cancelled({ ...call, callId: 'fc_456' })).toEqual({
      status: 'cancelled',
      call_id: 'fc_456',
    });
  });
});

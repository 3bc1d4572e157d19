import { describe, expect, it } from 'vitest';
import { LateBound } from '../src/late-bound.js';

describe('the modules the assembly binds late', () => {
  it('gives a module once it is made, and says which was used before it was made', () => {
    const late = new LateBound<{ worker: { freed(): string } }>();
    const freed = () => late.get('worker').freed();
    expect(freed).toThrow("the runtime's worker was used before it was made");
    late.set('worker', { freed: () => 'filled' });
    expect(freed()).toBe('filled');
  });

  it('refuses a module made twice', () => {
    const late = new LateBound<{ ending: object }>();
    late.set('ending', {});
    expect(() => late.set('ending', {})).toThrow("the runtime's ending was made twice");
  });
});

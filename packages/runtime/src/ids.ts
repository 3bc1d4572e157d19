import { getRandomValues } from 'node:crypto';
import { V7Generator } from 'uuidv7';

/** Random values drawn 1,024 at a time: the default draws 8, a call to the kernel every few ids. */
class BufferedRandom {
  readonly #buffer = new Uint32Array(1_024);
  #cursor = this.#buffer.length;

  nextUint32(): number {
    if (this.#cursor >= this.#buffer.length) {
      getRandomValues(this.#buffer);
      this.#cursor = 0;
    }
    return this.#buffer[this.#cursor++] as number;
  }
}

const generator = new V7Generator(new BufferedRandom());

/** A new UUIDv7 (time-ordered, so records and notifications sort by creation), for calls and notifications. */
export function newId(): string {
  return generator.generate().toString();
}

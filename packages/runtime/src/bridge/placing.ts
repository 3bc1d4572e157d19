/**
 * Where a turn's first step puts the results that came while the model was idle: before the
 * user's trailing words (the results came first), or after the history when the turn has no
 * words of the user's before them.
 */
export function turnStartIndex<M>(messages: readonly M[], isUser: (message: M) => boolean): number {
  let at = messages.length;
  while (at > 0 && isUser(messages[at - 1] as M)) at--;
  return at === 0 ? messages.length : at;
}

/**
 * The results a run has put into its model's messages, each at the index where it went in. A
 * framework whose steps are given the run's own messages (without what a hook added before) gets
 * them back in place at each step, and the run's history with them at its end.
 */
export class PlacedMessages<M> {
  #placed: Array<{ at: number; message: M }> = [];

  /** Puts `messages` at index `at` of the run's messages. */
  place(at: number, messages: readonly M[]): void {
    for (const message of messages) this.#placed.push({ at, message });
  }

  get size(): number {
    return this.#placed.length;
  }

  /** A new run: what was placed is in the history the application passes now. */
  clear(): void {
    this.#placed = [];
  }

  /**
   * The run's messages with the placed ones where they went in. One the framework kept in the
   * messages itself (the AI SDK 7 hands a step what the step before was given) is not put in again.
   */
  merged(messages: readonly M[]): M[] {
    // By identity: two results of the same words are two messages.
    const given = new Set(messages);
    const placed = this.#placed.filter(({ message }) => !given.has(message));
    const merged: M[] = [];
    let next = 0;
    const placedUpTo = (index: number) => {
      for (; next < placed.length && (placed[next]?.at ?? 0) <= index; next++)
        merged.push((placed[next] as { message: M }).message);
    };
    for (const [index, message] of messages.entries()) {
      placedUpTo(index);
      merged.push(message);
    }
    placedUpTo(Number.POSITIVE_INFINITY);
    return merged;
  }
}

/**
 * The modules of the journey that call each other both ways, each made once by the assembly: a
 * freed slot tells the worker, which fills the slots; a call's end drops a call through the
 * recovery, which ends calls; the worker takes calls up through the recovery, which adopts what it
 * claims into the worker; a repeated call id is detached through the client, which asks the
 * repeated calls first. What is made first reaches what is made after it through this, and only
 * once the runtime runs: a use before then is a defect of the assembly, and says so.
 */
export class LateBound<T extends object> {
  readonly #made: Partial<T> = {};

  /** Keeps `value` as `name`, once, and gives it back. */
  set<K extends keyof T>(name: K, value: T[K]): T[K] {
    if (this.#made[name] !== undefined) throw new Error(`the runtime's ${String(name)} was made twice`);
    this.#made[name] = value;
    return value;
  }

  get<K extends keyof T>(name: K): T[K] {
    const value = this.#made[name];
    if (value === undefined) throw new Error(`the runtime's ${String(name)} was used before it was made`);
    return value as T[K];
  }
}

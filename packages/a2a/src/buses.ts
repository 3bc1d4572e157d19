import {
  DefaultExecutionEventBus,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
} from '@a2a-js/sdk/server';

/**
 * The event buses of the tasks, as the SDK's in-process manager keeps them, and one more use: a
 * task whose call went on in the background has a bus made for each `SubscribeToTask` after its
 * request's bus was closed (the blocking request returned it `working`), on which its end is
 * published when the call ends.
 */
export class BatonEventBuses implements ExecutionEventBusManager {
  readonly #buses = new Map<string, ExecutionEventBus>();
  /** The tasks whose calls went on in the background and have not ended. */
  readonly #inBackground = new Set<string>();

  createOrGetByTaskId(taskId: string): ExecutionEventBus {
    let bus = this.#buses.get(taskId);
    if (bus === undefined) {
      bus = new DefaultExecutionEventBus();
      this.#buses.set(taskId, bus);
    }
    return bus;
  }

  getByTaskId(taskId: string): ExecutionEventBus | undefined {
    return (
      this.#buses.get(taskId) ??
      (this.#inBackground.has(taskId) ? this.createOrGetByTaskId(taskId) : undefined)
    );
  }

  cleanupByTaskId(taskId: string): void {
    this.#buses.get(taskId)?.removeAllListeners();
    this.#buses.delete(taskId);
  }

  /** The task's call goes on in the background: subscribers may follow it to its end. */
  inBackground(taskId: string): void {
    this.#inBackground.add(taskId);
  }

  isInBackground(taskId: string): boolean {
    return this.#inBackground.has(taskId);
  }

  /** The task's call ended: what its subscribers are told, and its bus closed. */
  ended(taskId: string, publish: (bus: ExecutionEventBus) => void): void {
    this.#inBackground.delete(taskId);
    const bus = this.#buses.get(taskId);
    if (bus === undefined) return;
    publish(bus);
    bus.finished();
    this.cleanupByTaskId(taskId);
  }
}

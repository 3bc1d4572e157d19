import type { Clock } from '../clock.js';
import type { Admission } from './admission.js';
import type { Send } from './driver.js';
import type { LiveCall } from './live-call.js';

export interface SlotsDeps {
  admission: Admission;
  send: Send;
  clock: Clock;
  /** A slot was freed (a worker may claim more calls from a shared store). */
  freed: () => void;
}

/** The concurrency slots: a call joins the queue, starts when the admission gives it a slot, and gives it back. */
export class Slots {
  #pumping = false;

  constructor(private readonly deps: SlotsDeps) {}

  /** The `enqueue` action. */
  enqueue(call: LiveCall): void {
    this.deps.admission.enqueue(call);
    this.pump();
  }

  /** The `releaseSlot` action: the slot goes to the next call that may start, or the call leaves the queue. */
  release(call: LiveCall): void {
    const { admission, freed } = this.deps;
    if (!call.holdsSlot) {
      admission.withdraw(call);
      return;
    }
    call.holdsSlot = false;
    admission.release(call);
    this.pump();
    freed();
  }

  /** Starts every call that may start now; a slot is free. */
  pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    const { admission, send, clock } = this.deps;
    try {
      for (let call = admission.take(); call; call = admission.take()) {
        call.holdsSlot = true;
        call.record.startedAt = clock.now();
        send(call, { type: 'START' });
      }
    } finally {
      this.#pumping = false;
    }
  }

  get running(): number {
    return this.deps.admission.running;
  }

  get waiting(): number {
    return this.deps.admission.waiting;
  }
}

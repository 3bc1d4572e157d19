import type { CallControl } from '@baton/store';
import type { RuntimeParts } from './assembly.js';
import { refusalHandledElsewhere } from './call/ending.js';
import { APPROVAL_REJECTED_REASON, approvalRejectedMessage } from './messages.js';

type ControlParts = Pick<RuntimeParts, 'registry' | 'worker' | 'driver' | 'writer' | 'host'>;

/**
 * What a caller (or another process, through the store's notices) asks of a call: approve it,
 * reject it, cancel it, stop waiting for it, or read an event resolved elsewhere. A call that is not live here is asked of the
 * process that runs it.
 */
export class CallControls {
  readonly #parts: ControlParts;
  readonly #cancel: (callId: string, reason?: string) => Promise<boolean>;

  constructor(parts: ControlParts, cancel: (callId: string, reason?: string) => Promise<boolean>) {
    this.#parts = parts;
    this.#cancel = cancel;
  }

  async control({ callId, action, reason, key }: CallControl): Promise<boolean> {
    if (action === 'cancel') return this.#cancel(callId, reason);
    if (action === 'resolved') {
      if (key !== undefined) await this.#parts.host.resolvedElsewhere(key);
      return true;
    }
    if (action === 'approve') return this.approve(callId);
    if (action === 'detach') return Promise.resolve(this.#detach(callId));
    return this.reject(callId, reason ?? APPROVAL_REJECTED_REASON);
  }

  async approve(callId: string): Promise<boolean> {
    const { registry, worker, driver, writer } = this.#parts;
    const call = registry.get(callId);
    if (!call) return worker.controlRemote({ type: 'control', callId, action: 'approve' });
    if (call.record.approval !== 'pending') return false;
    driver.send(call, { type: 'APPROVE' });
    await writer.recordConfirmed(call.record).catch(refusalHandledElsewhere);
    return true;
  }

  async reject(callId: string, reason: string): Promise<boolean> {
    const { registry, worker, driver } = this.#parts;
    const call = registry.get(callId);
    if (!call) return worker.controlRemote({ type: 'control', callId, action: 'reject', reason });
    if (call.record.approval !== 'pending') return false;
    const message = approvalRejectedMessage(reason);
    const error = { code: 'approval_rejected' as const, message };
    driver.send(call, { type: 'REJECT', outcome: { ok: false, error, output: { error: message } } });
    await call.endWritten?.catch(refusalHandledElsewhere);
    return true;
  }

  /** Its caller, in a client that stops, no longer waits: the call goes on here, detached. */
  #detach(callId: string): boolean {
    const { registry, driver } = this.#parts;
    const call = registry.get(callId);
    if (!call) return false;
    driver.send(call, { type: 'HANDOVER' });
    return true;
  }
}

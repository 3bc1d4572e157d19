import type { Notification, TerminalStatus } from '@baton/contracts';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import {
  CANCELLED_BEFORE_COMPLETION,
  notificationBody,
  notificationTitle,
  runEndedMessage,
  runStatusWord,
  runSummary,
} from '../messages.js';
import { modelVisible } from '../outcome.js';
import type { WebhookDeliveries } from '../webhooks/deliveries.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { LiveCall } from './live-call.js';
import { formattedCall } from './replies.js';
import type { CallUpdates } from './updates.js';
import type { CallWrites } from './writes.js';

export interface NotificationsDeps {
  writes: CallWrites;
  writer: Pick<WriteBatcher, 'add'>;
  clock: Clock;
  /** When the runtime has webhooks: each notification's delivery, written with it. */
  webhooks: Pick<WebhookDeliveries, 'deliveryOf'> | undefined;
  /** The call's intermediate results, which its end replaces. */
  updates: Pick<CallUpdates, 'replacedByEnd'>;
}

/** What the session of a detached call gets when it ends: a notification, and the run's files. */
export class CallNotifications {
  constructor(private readonly deps: NotificationsDeps) {}

  /** The `notify` action (the background continuation): the end of a call whose caller was answered `backgrounded` goes to its session. */
  notify(call: LiveCall, status: TerminalStatus): void {
    const { writes, writer, clock } = this.deps;
    const record = call.record;
    if (record.run && !record.run.signalOnCompletion) return;
    this.deps.updates.replacedByEnd(call);
    const visible = record.error && modelVisible(record.error);
    const formatted = formattedCall(record, call.settings);
    const output =
      status === 'cancelled'
        ? record.output
        : call.settings.formatter.result(
            formatted,
            visible ? { ok: false, error: visible } : { ok: true, value: record.output },
          );
    const text =
      status === 'cancelled'
        ? { error: CANCELLED_BEFORE_COMPLETION }
        : visible
          ? { error: visible.message }
          : { value: record.output };
    const notification: Notification = {
      id: newId(),
      callId: record.callId,
      sessionId: record.sessionId,
      toolName: record.toolName,
      status: 'queued',
      outcome: status,
      title: notificationTitle(record.toolName, status),
      body: record.run
        ? runEndedMessage(record, runStatusWord(status), runSummary(text))
        : notificationBody(formatted, text),
      output,
      scheduling: call.tool.execution.scheduling,
      createdAt: clock.now(),
    };
    writer.add('notifications', notification);
    const delivery = this.deps.webhooks?.deliveryOf(notification, record);
    if (delivery) writer.add('deliveries', delivery);
    writes.emit(call, { type: 'notification', notificationId: notification.id, title: notification.title });
  }

  /** The `keepArtifacts` action (the background runs): a background run leaves its `output.log` and its `result.json`. */
  keepArtifacts(call: LiveCall, status: TerminalStatus): void {
    const { callId, result, rawOutput, error } = call.record;
    const log = status === 'succeeded' && rawOutput !== undefined ? rawOutput : call.outputLog();
    const outcome = status === 'succeeded' ? result : { status, error: error?.message };
    const { writer } = this.deps;
    writer.add('artifacts', { callId, name: 'output.log', content: log });
    writer.add('artifacts', {
      callId,
      name: 'result.json',
      content: JSON.stringify(outcome ?? null, null, 2),
    });
  }
}

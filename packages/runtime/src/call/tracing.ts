import { createRequire } from 'node:module';
import { type CallEvent, type CallStatus, isTerminalStatus, type TraceCarrier } from '@baton/contracts';
import type * as OpenTelemetry from '@opentelemetry/api';
import type { LiveCall } from './live-call.js';

type Api = typeof OpenTelemetry;

/**
 * `@opentelemetry/api`, when the application has it (an optional peer). Loaded with `require`: its
 * global registry is shared across copies and module systems, so spans reach whichever SDK the
 * application registered.
 */
function loadApi(): Api | undefined {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as Api;
  } catch (error) {
    // Not installed: Baton traces nothing. Any other failure is a broken install, said as it is.
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/**
 * Each run of a call is an OpenTelemetry span, `execute_tool {name}` as the GenAI semantic
 * conventions name it, in the process that runs the call. Its parent is the caller's span, stored
 * with the call (`CallRecord.trace`), so a worker on a shared store continues the client's trace.
 * Attempts, retries, promotion and input requests are events on it; the tool runs inside it, so its
 * own spans nest. Without an SDK registered the API hands out non-recording spans: nothing is kept.
 */
export class CallTracing {
  readonly #api: Api;
  readonly #tracer: OpenTelemetry.Tracer;
  readonly #spans = new WeakMap<LiveCall, OpenTelemetry.Span>();
  /** The provider the API gives while no SDK is registered: then Baton opens no span at all. */
  readonly #noop: OpenTelemetry.TracerProvider;

  private constructor(api: Api) {
    this.#api = api;
    this.#tracer = api.trace.getTracer('@baton/runtime');
    this.#noop = new api.ProxyTracerProvider().getDelegate();
  }

  /** Whether an SDK is registered (it may be after the runtime was made): checked per call, no allocation. */
  #sdkRegistered(): boolean {
    const provider = this.#api.trace.getTracerProvider();
    return !(provider instanceof this.#api.ProxyTracerProvider && provider.getDelegate() === this.#noop);
  }

  /** Tracing, when `@opentelemetry/api` is installed. */
  static load(): CallTracing | undefined {
    const api = loadApi();
    return api ? new CallTracing(api) : undefined;
  }

  /** The active span's context, to store with a new call; undefined when no span is active. */
  carrier(): TraceCarrier | undefined {
    const { context, propagation, trace } = this.#api;
    const active = context.active();
    if (trace.getSpan(active) === undefined) return undefined;
    const carrier: Partial<TraceCarrier> = {};
    propagation.inject(active, carrier);
    return carrier.traceparent === undefined ? undefined : (carrier as TraceCarrier);
  }

  /**
   * An event of a call run here: its admission (or, for a call claimed or recovered, its attempt)
   * opens its span, the terminal event closes it.
   */
  record(call: LiveCall, event: CallEvent): void {
    let span = this.#spans.get(call);
    if (!span) {
      if (event.type !== 'queued' && event.type !== 'started') return;
      if (!this.#sdkRegistered()) return;
      span = this.#open(call, event.at);
    }
    if (!span.isRecording()) return;
    switch (event.type) {
      case 'started':
        span.addEvent('baton.call.started', { 'baton.call.attempt': event.attempt }, event.at);
        return;
      case 'retrying':
        span.addEvent(
          'baton.call.retrying',
          {
            'baton.call.attempt': event.attempt,
            'baton.call.retry_delay_ms': event.delayMs,
            'error.type': event.error.code,
          },
          event.at,
        );
        return;
      case 'backgrounded':
        span.addEvent(
          'baton.call.backgrounded',
          { 'baton.call.reason': event.reason, 'baton.call.after_ms': event.afterMs },
          event.at,
        );
        return;
      case 'input_requested':
        span.addEvent('baton.call.input_requested', { 'baton.input.name': event.name }, event.at);
        return;
      default:
        if (isTerminalStatus(event.type as CallStatus)) this.#close(call, span, event);
    }
  }

  /** Runs `fn` (the tool's `execute`) with the call's span active, so the tool's spans nest in it. */
  within<T>(call: LiveCall, fn: () => T): T {
    const span = this.#spans.get(call);
    if (!span?.isRecording()) return fn();
    const { context, trace, ROOT_CONTEXT } = this.#api;
    return context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
  }

  #open(call: LiveCall, at: number): OpenTelemetry.Span {
    const { propagation, ROOT_CONTEXT, SpanKind } = this.#api;
    const { record } = call;
    const parent = record.trace ? propagation.extract(ROOT_CONTEXT, record.trace) : ROOT_CONTEXT;
    const span = this.#tracer.startSpan(
      `execute_tool ${record.toolName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': record.toolName,
          'gen_ai.tool.call.id': record.callId,
          'gen_ai.tool.type': 'function',
          'baton.session.id': record.sessionId,
          'baton.call.mode': record.mode,
        },
      },
      parent,
    );
    this.#spans.set(call, span);
    return span;
  }

  #close(call: LiveCall, span: OpenTelemetry.Span, event: CallEvent): void {
    const { SpanStatusCode } = this.#api;
    span.setAttribute('baton.call.status', event.type);
    span.setAttribute('baton.call.attempts', call.record.attempt);
    if (event.type === 'failed') {
      span.setAttribute('error.type', event.error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
    } else if (event.type === 'timed_out') {
      span.setAttribute('error.type', 'timed_out');
      span.setStatus({ code: SpanStatusCode.ERROR, message: `timed out after ${event.timeoutMs} ms` });
    } else if (event.type === 'cancelled') {
      span.addEvent('baton.call.cancelled', { 'baton.call.reason': event.reason }, event.at);
    }
    span.end(event.at);
    this.#spans.delete(call);
  }
}

import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/** A client event as it arrives: its `type` and the rest. */
export interface ClientEvent {
  type: string;
  [field: string]: unknown;
}

/**
 * A local stand-in for the OpenAI Realtime endpoint: it speaks the protocol's server events (the
 * SDK's WebSocket transport reads them), answers `response.create` with a response that starts and
 * ends, keeps what the client sent, and lets a test play the model: start a response, call a
 * function in it, end it.
 */
export async function fakeRealtimeServer() {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const received: ClientEvent[] = [];
  let socket: WebSocket | undefined;
  let responses = 0;
  /** The response the model is giving, if any. */
  let speaking: string | undefined;
  let heard: () => void = () => {};
  const send = (event: Record<string, unknown>) =>
    socket?.send(JSON.stringify({ event_id: `evt_${Math.random()}`, ...event }));
  const response = (id: string, status: string) => ({ id, object: 'realtime.response', status, output: [] });
  server.on('connection', (connection) => {
    socket = connection;
    send({ type: 'session.created', session: { id: 'sess_1', object: 'realtime.session' } });
    connection.on('message', (data) => {
      const event = JSON.parse(String(data)) as ClientEvent;
      received.push(event);
      // The model answers each response asked of it at once, in a response that starts and ends.
      // A cancelled response ends at once.
      if (event.type === 'response.cancel' && speaking) {
        send({ type: 'response.done', response: response(speaking, 'cancelled') });
        speaking = undefined;
      }
      if (event.type === 'response.create') {
        const id = `resp_${++responses}`;
        send({ type: 'response.created', response: response(id, 'in_progress') });
        send({ type: 'response.done', response: response(id, 'completed') });
      }
      heard();
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    /** The model starts speaking (a response in progress). */
    startResponse(id: string): void {
      speaking = id;
      send({ type: 'response.created', response: response(id, 'in_progress') });
    },
    /** The model calls a function in the response `responseId`. */
    callFunction(responseId: string, callId: string, name: string, args: object): void {
      send({
        type: 'response.output_item.done',
        response_id: responseId,
        output_index: 0,
        item: {
          id: `item_${callId}`,
          object: 'realtime.item',
          type: 'function_call',
          status: 'completed',
          call_id: callId,
          name,
          arguments: JSON.stringify(args),
        },
      });
    },
    /** The model speaks in the response `responseId`: a chunk of its audio. */
    speak(responseId: string): void {
      send({
        type: 'response.output_audio.delta',
        response_id: responseId,
        item_id: `item_speech_${responseId}`,
        output_index: 0,
        content_index: 0,
        delta: Buffer.alloc(4_800).toString('base64'),
      });
    },
    /** The user starts speaking over the model (the server's voice activity detection). */
    userSpeaks(): void {
      send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: 'item_user' });
    },
    /** The model's response ends. */
    endResponse(id: string): void {
      speaking = undefined;
      send({ type: 'response.done', response: response(id, 'completed') });
    },
    /** The connection drops (the network, the server): the client sees it close. */
    drop(): void {
      socket?.terminate();
      socket = undefined;
    },
    /** Resolves once `check` finds something in what the client sent. */
    async until<T>(check: (events: ClientEvent[]) => T | undefined): Promise<T> {
      for (;;) {
        const found = check(received);
        if (found !== undefined) return found;
        await new Promise<void>((resolve) => {
          heard = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => {
      socket?.terminate();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The function call outputs the client sent, by call id. */
export function outputsOf(events: ClientEvent[]): Array<{ callId: string; output: string }> {
  return events.flatMap((event) => {
    const item = event.item as { type?: string; call_id?: string; output?: string } | undefined;
    return event.type === 'conversation.item.create' && item?.type === 'function_call_output'
      ? [{ callId: item.call_id ?? '', output: item.output ?? '' }]
      : [];
  });
}

/** The texts of the user messages the client put into the conversation. */
export function messagesOf(events: ClientEvent[]): string[] {
  return events.flatMap((event) => {
    const item = event.item as { type?: string; content?: Array<{ text?: string }> } | undefined;
    return event.type === 'conversation.item.create' && item?.type === 'message'
      ? [(item.content ?? []).map((part) => part.text ?? '').join('')]
      : [];
  });
}

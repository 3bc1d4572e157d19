/** A Server-Sent Events message as a client reads it. */
export interface SseMessage<T = unknown> {
  id: string | undefined;
  /** The `event:` name, when the message has one. */
  event?: string | undefined;
  data: T;
}

/** Reads the messages of an SSE response (comments skipped) until the stream ends or is aborted. */
export async function* readSse<T = unknown>(response: Response): AsyncGenerator<SseMessage<T>> {
  if (!response.body) throw new Error('the response has no body');
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end !== -1) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
      let id: string | undefined;
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) yield { id, event, data: JSON.parse(data.join('\n')) as T };
    }
  }
}

/** The SQLite store's writer thread: it makes the store's changes, one after another, as asked. */
import { parentPort, workerData } from 'node:worker_threads';
import { isBatonError } from '@baton/contracts';
import { openDatabase } from './opening.js';
import { SqliteWriter } from './sqlite-writer.js';
import type { CrossedError, WriterReply, WriterRequest, WriterThreadData } from './writer-thread.js';

function crossed(error: unknown): CrossedError {
  if (isBatonError(error)) return { message: error.message, batonCode: error.code };
  const code = (error as { code?: unknown }).code;
  return {
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

const port = parentPort;
if (!port) throw new Error('writer-entry.js runs as a worker thread of the SQLite store');
// The store opened (and checked, and migrated) the file already.
const writer = new SqliteWriter(
  openDatabase({ ...(workerData as WriterThreadData), check: 'none', migrate: false }),
);

port.on('message', ({ id, method, args }: WriterRequest) => {
  let reply: WriterReply;
  try {
    const change = method === 'close' ? writer.close : (writer[method] as (...given: unknown[]) => unknown);
    reply = { id, result: change.apply(writer, args) };
  } catch (error) {
    reply = { id, error: crossed(error) };
  }
  port.postMessage(reply);
  if (method === 'close') port.close();
});

/**
 * The request log's writer thread (request-log.writer.ts): makes each capture's entry and writes
 * each batch in one transaction on a connection of its own, one batch at a time, and answers
 * every batch with its id (and the error's message when it was refused).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openWriterDatabase, type DatabaseLocation } from '../../db/database.js';
import { entryOf, type Capture } from './request-log.capture.js';
import { RequestLogRepository } from './request-log.repository.js';

export type WriterRequest = { id: number; captures: Capture[] } | { close: true };
export interface WriterReply {
  id: number;
  error?: string;
}

const port = parentPort;
if (port) {
  const database = openWriterDatabase(workerData as DatabaseLocation);
  const repository = new RequestLogRepository(database.db);
  let writing = Promise.resolve();
  port.on('message', (request: WriterRequest) => {
    writing = writing.then(async () => {
      if ('close' in request) {
        await database.close();
        port.close();
        return;
      }
      try {
        await repository.insertBatch(request.captures.map(entryOf));
        port.postMessage({ id: request.id } satisfies WriterReply);
      } catch (error) {
        port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies WriterReply);
      }
    });
  });
}

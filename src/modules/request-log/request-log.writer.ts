import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DatabaseLocation } from '../../db/database.js';
import { entryOf, type Capture } from './request-log.capture.js';
import type { RequestLogRepository } from './request-log.repository.js';
import type { WriterReply, WriterRequest } from './request-log.writer-thread.js';

/** Writes one batch of captures in one transaction, somewhere. */
export interface CaptureWriter {
  write(captures: Capture[]): Promise<void>;
  close(): Promise<void>;
}

/** On the event loop, with the app's own connection (test apps: AppConfig.requestLogWriter). */
export function eventLoopWriter(repository: RequestLogRepository): CaptureWriter {
  return { write: (captures) => repository.insertBatch(captures.map(entryOf)), close: async () => {} };
}

const CLOSE_GRACE_MS = 5_000;

/**
 * On a worker thread of its own, with its own connection (request-log.writer-thread.ts): the
 * entries' making and their INSERTs cost the event loop nothing, only the batch's structured
 * clone (docs/performance.md, "Request log cost"). Started at the first batch, so an app that
 * records nothing starts no thread; started again at the next batch if it ever dies (the
 * batches it held are lost and counted by the recorder, as a refused batch is).
 */
type Pending = Map<number, { resolve: () => void; reject: (error: Error) => void }>;

export class ThreadWriter implements CaptureWriter {
  /** The live thread and the batches it holds: a thread that ends fails only its own. */
  #thread: { worker: Worker; pending: Pending } | undefined;
  #next = 0;

  /** `committed`: a batch is in the database (the app's listeners are told: Database.committedElsewhere). */
  constructor(
    private readonly location: DatabaseLocation,
    private readonly committed: () => void,
  ) {}

  async write(captures: Capture[]): Promise<void> {
    const { worker, pending } = this.#thread ?? this.#start();
    const id = ++this.#next;
    await new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, captures } satisfies WriterRequest);
    });
    this.committed();
  }

  async close(): Promise<void> {
    const worker = this.#thread?.worker;
    this.#thread = undefined;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ close: true } satisfies WriterRequest);
    const grace = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(grace);
  }

  #start(): { worker: Worker; pending: Pending } {
    const worker = spawnWriterThread(this.location);
    const pending: Pending = new Map();
    const thread = { worker, pending };
    // Never what keeps the process up: the server's shutdown closes it (after the last batch).
    worker.unref();
    worker.on('message', ({ id, error }: WriterReply) => {
      const batch = pending.get(id);
      pending.delete(id);
      if (error === undefined) batch?.resolve();
      else batch?.reject(new Error(error));
    });
    // 'error' and then 'exit' come after the thread ended, maybe once the next thread holds a batch.
    const fail = (reason: string) => {
      if (this.#thread === thread) this.#thread = undefined;
      for (const batch of pending.values()) batch.reject(new Error(reason));
      pending.clear();
    };
    worker.on('error', (error) => fail(`the writer thread failed: ${error.message}`));
    worker.on('exit', (code) => fail(`the writer thread ended (exit code ${code})`));
    this.#thread = thread;
    return thread;
  }
}

/**
 * The thread's heap is small (its modules, one batch of entries: at most 500 × 32 KB of bodies);
 * V8's defaults would let it reserve as much as the app's (docs/performance.md, "Request log
 * cost"). Past these, the thread ends and its batch is dropped and counted, never the app.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 };

function spawnWriterThread(location: DatabaseLocation): Worker {
  const extension = path.extname(fileURLToPath(import.meta.url));
  const source = new URL(`./request-log.writer-thread${extension}`, import.meta.url);
  if (extension === '.js') return new Worker(source, { workerData: location, resourceLimits: THREAD_LIMITS });
  // From the sources (`npm start`, tests): tsx compiles the thread's modules as it does the app's.
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source.href)}); });`, { eval: true, workerData: location, resourceLimits: THREAD_LIMITS });
}

import { describe, expect, it } from 'vitest';
import { RequestLogRecorder, type RequestLogEntry } from '../../src/modules/request-log/request-log.recorder.js';

const entry = (n: number) => ({ request_id: `r${n}` }) as RequestLogEntry;

describe('the request log recorder: a bounded queue written in batches', () => {
  it('writes queued entries in batches, in order', async () => {
    const batches: string[][] = [];
    const recorder = new RequestLogRecorder({ write: async (entries) => void batches.push(entries.map((e) => e.request_id)), capacity: 100, batchSize: 3, flushMs: 1000, warn: () => {} });
    for (let i = 1; i <= 7; i++) recorder.record(entry(i));
    await recorder.flush();
    expect(batches.flat()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    expect(batches.every((batch) => batch.length <= 3)).toBe(true);
    expect(recorder.counts).toEqual({ recorded: 7, dropped: 0, queued: 0 });
  });

  it('drops and counts what does not fit while the database is slow, never blocking the caller', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const warnings: string[] = [];
    const written: string[] = [];
    const recorder = new RequestLogRecorder({
      write: async (entries) => {
        await blocked;
        written.push(...entries.map((e) => e.request_id));
      },
      capacity: 2,
      batchSize: 1,
      flushMs: 0,
      warn: (message) => warnings.push(message),
    });
    recorder.record(entry(1));
    // The first batch is taken and its write hangs; two more fit the queue, the rest are dropped.
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 2; i <= 6; i++) recorder.record(entry(i));
    expect(recorder.counts.dropped).toBe(3);
    expect(warnings[0]).toContain('queue full');
    release();
    await recorder.flush();
    expect(written).toEqual(['r1', 'r2', 'r3']);
    expect(recorder.counts).toEqual({ recorded: 3, dropped: 3, queued: 0 });
  });

  it('counts a batch the database refused as dropped, and goes on with the next', async () => {
    let calls = 0;
    const recorder = new RequestLogRecorder({
      write: async () => {
        calls += 1;
        if (calls === 1) throw new Error('connection refused');
      },
      capacity: 10,
      batchSize: 2,
      flushMs: 1000,
      warn: () => {},
    });
    for (let i = 1; i <= 4; i++) recorder.record(entry(i));
    await recorder.flush();
    expect(recorder.counts).toEqual({ recorded: 2, dropped: 2, queued: 0 });
  });
});

import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../kernel/clock.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Random bytes drawn 4 KB at a time: one system call per 410 ids instead of one each. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomBytes10(): Buffer {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

/**
 * A UUID version 7 (RFC 9562 §5.7): 48 bits of Unix milliseconds, then 74 random bits. Ids made
 * later sort later, so the request log's index on request ids grows at its right edge instead
 * of dirtying a random page per request: with random (v4) ids each batch of the log rewrote
 * hundreds of index pages (docs/performance.md, "Request log cost"). Still an opaque UUID to
 * clients; 74 random bits keep ids unguessable within a millisecond.
 */
export function uuidV7(milliseconds: number): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(milliseconds, 0, 6);
  randomBytes10().copy(bytes, 6);
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Keeps a caller's X-Request-Id when it is safe to log and echo; otherwise makes one (a UUIDv7 from the app's clock). */
export function requestIdsFrom(clock: Clock): (request: IncomingMessage) => string {
  return (request) => {
    const incoming = request.headers['x-request-id'];
    return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : uuidV7(clock.now());
  };
}

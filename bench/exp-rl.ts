import fs from 'node:fs';
import { startOnOffService, disposeServices, type OnOffService } from './on-off.js';
import { cleanup, processTicksSplit } from './exp-helpers.js';
import { runState, freeHelperThreads } from './processes.js';
runState.stopGraceMs = 60_000;
import { runWrk } from './wrk.js';
import { busyTicks, CLOCK_TICKS } from './measure.js';
const scen = process.argv[2] ?? 'by id';
async function one(s: OnOffService) {
  const url = scen === 'by id' ? `${s.base}${s.byId}` : `${s.base}/v2/cheeses?limit=20`;
  await runWrk(url, s.auth, 1, 20);
  const pid = s.child.process.pid!;
  freeHelperThreads(pid);
  const b = processTicksSplit(pid); const bb = busyTicks(); const t = performance.now();
  const r = await runWrk(url, s.auth, 8, 20);
  const a = processTicksSplit(pid); const ab = busyTicks(); const wall = (performance.now() - t) / 1000;
  const u = (a.u - b.u) / CLOCK_TICKS, sy = (a.s - b.s) / CLOCK_TICKS;
  console.log(`${s.mode}: ${Math.round(r.rps)} req/s, user ${(u / wall * 100).toFixed(0)}% sys ${(sy / wall * 100).toFixed(0)}% µs/req user ${(u / r.requests * 1e6).toFixed(0)} sys ${(sy / r.requests * 1e6).toFixed(0)}; cpu1 busy ${(((ab.get('cpu1')! - bb.get('cpu1')!) / CLOCK_TICKS) / wall * 100).toFixed(0)}% cpu0 ${(((ab.get('cpu0')! - bb.get('cpu0')!) / CLOCK_TICKS) / wall * 100).toFixed(0)}%`);
}
try {
  const on = await startOnOffService('REQUEST_LOG', 'on', process.env.DBURL, { REQUEST_LOG: 'on' });
  const off = await startOnOffService('REQUEST_LOG', 'off', process.env.DBURL, { REQUEST_LOG: 'off' });
  for (let i = 0; i < (process.env.PROF ? 1 : 3); i++) { await one(on); await one(off); }
} finally { await cleanup(); await disposeServices(); }

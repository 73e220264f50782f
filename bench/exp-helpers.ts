import fs from 'node:fs';
export { cleanup } from './processes.js';
export function processTicksSplit(pid: number) { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return { u: Number(f[11]), s: Number(f[12]) }; }

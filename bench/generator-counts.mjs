// Which generator functions of myclaw's build run on every conversation of the step workload, and how often
// (V8's precise coverage; a generator's count is its resumptions). A `function*` written inside a function that
// runs per call is a new function each time, and V8 gives each its own prototype and hidden class (microseconds
// a call): what runs per conversation should take its generator from `Effect.fnUntraced`, made once.
//   node bench/generator-counts.mjs            (MYCLAW_DIST picks another build)
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import * as harness from './lib/harness.mjs';
import { makeMyclawAgent } from './lib/myclaw-agent.mjs';

const dist = process.env.MYCLAW_DIST || fileURLToPath(new URL('../dist/', import.meta.url));
const CONVERSATIONS = 200;
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
const agent = await makeMyclawAgent({ harness, dist, fsync: 'batch' });
for (let i = 0; i < 50; i++) await agent.runOnce();
await session.post('Profiler.takePreciseCoverage'); // resets the counts: only the measured conversations count
for (let i = 0; i < CONVERSATIONS; i++) await agent.runOnce();
const { result } = await session.post('Profiler.takePreciseCoverage');
await agent.dispose();

const rows = [];
for (const script of result) {
  if (!script.url.startsWith('file:') || script.url.includes('node_modules')) continue;
  const file = fileURLToPath(script.url);
  if (!file.startsWith(dist)) continue;
  const source = fs.readFileSync(file, 'utf8');
  for (const fn of script.functions) {
    const range = fn.ranges[0];
    if (range.count < CONVERSATIONS || !source.startsWith('function*', range.startOffset)) continue;
    const line = source.slice(0, range.startOffset).split('\n').length;
    const text = source.split('\n')[line - 1].trim().slice(0, 100);
    rows.push({ per_conversation: range.count / CONVERSATIONS, at: `${file.slice(dist.length)}:${line}`, text });
  }
}
rows.sort((a, b) => b.per_conversation - a.per_conversation);
for (const row of rows) console.log(JSON.stringify(row));

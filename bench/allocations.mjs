// What a conversation of the step workload allocates, and where: V8's sampling heap profiler, keeping the samples
// that young- and old-generation collections took away, over conversations run one after another. Every
// allocated byte costs twice (the allocation, and the scavenge that sweeps the young generation it filled), and
// a conversation that allocates half a megabyte evicts most of what the processor had cached between its steps.
// A diagnostic, not a scenario of `npm run bench`: run it after `npm run build`. One JSON line on stdout.
//
//   node bench/allocations.mjs                        (MYCLAW_DIST picks another build)
//   CONVERSATIONS (500) sampled after WARMUP (300); INTERVAL (256), the mean bytes between samples; TOP (30)
//   sites listed: a function by its file (node_modules and the dist folder cut off) and line.
import * as harness from './lib/harness.mjs';
import { countFromEnv as count } from './lib/env-count.mjs';
import { shortFile, withInspectedAgent } from './lib/inspected-agent.mjs';

const CONVERSATIONS = count('CONVERSATIONS', 500);
const WARMUP = count('WARMUP', 300);
const INTERVAL = count('INTERVAL', 256);
const TOP = count('TOP', 30);

await withInspectedAgent(WARMUP, async (agent, session) => {
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < CONVERSATIONS; i++) await agent.runOnce();
  const { profile } = await session.post('HeapProfiler.stopSampling');

  const bySite = new Map();
  const byFile = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node) => {
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = shortFile(url);
      total += node.selfSize;
      add(bySite, `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`, node.selfSize);
      // Effect's own modules as one: its run loop, primitives and continuations.
      add(byFile, file.startsWith('effect/dist/') ? 'effect (the runtime)' : file || '(native)', node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const kb = (bytes) => Math.round((bytes / CONVERSATIONS / 1024) * 10) / 10;
  const largest = (map, n) =>
    Object.fromEntries([...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([key, bytes]) => [key, kb(bytes)]));
  process.stdout.write(
    `${JSON.stringify({
      scenario: 'allocations',
      conversations: CONVERSATIONS,
      steps: harness.STEPS,
      kb_allocated_per_conversation: kb(total),
      kb_by_file: largest(byFile, TOP),
      kb_by_site: largest(bySite, TOP),
      node: process.version,
    })}\n`,
  );
});

// Where a peer's memory goes, at the points the shared peer harness measures it: preloaded into any peer of the
// shared bench folder (myclaw's or another framework's), it prints to stderr, after each full GC the harness
// asks for, V8's heap spaces (size / used) and the process's resident memory by kind.
//
//   node --expose-gc --import ./memory-probe.mjs peer-myclaw.mjs     (in the copy of the shared bench folder)
//
// The harness collects twice before its memory phase (the 2nd line: the base after warm-up) and twice once the
// HOLD conversations are parked (the 4th: what the peak RSS is measured next to). The peer's JSON line on stdout
// is unchanged; the probe only reads.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';

const collect = globalThis.gc;
if (typeof collect !== 'function') throw new Error('memory-probe: run node with --expose-gc');

const mb = (bytes) => (bytes / 1048576).toFixed(1);
const residentKb = (field, rollup) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
let calls = 0;

globalThis.gc = (...args) => {
  const result = collect(...args);
  calls += 1;
  const spaces = v8
    .getHeapSpaceStatistics()
    .filter((space) => space.space_size > 0)
    .map((space) => `${space.space_name.replace(/_space$/, '')} ${mb(space.space_size)}/${mb(space.space_used_size)}`)
    .join(', ');
  const usage = process.memoryUsage();
  let resident = '';
  try {
    const rollup = readFileSync('/proc/self/smaps_rollup', 'utf8');
    resident = `; anonymous ${mb(residentKb('Anonymous', rollup) * 1024)} MB, file-backed ${mb(
      (residentKb('Rss', rollup) - residentKb('Anonymous', rollup)) * 1024,
    )} MB`;
  } catch {
    // Not Linux: the V8 figures alone.
  }
  process.stderr.write(
    `memory-probe gc#${calls}: heap used ${mb(usage.heapUsed)} of ${mb(usage.heapTotal)} MB (${spaces}); ` +
      `rss ${mb(usage.rss)} MB, peak ${mb(process.resourceUsage().maxRSS * 1024)} MB${resident}\n`,
  );
  return result;
};

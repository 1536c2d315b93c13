// Two or more builds (or tool forms) of the step-overhead workload compared in one process, their conversations
// interleaved: on a shared machine whose speed drifts by tens of percent from one minute to the next, runs of each
// build in turn (one process after another) measure the drift as much as the builds; here every build's
// conversations are spread over the same minutes, and the order of the builds rotates from one round to the next,
// so that none always runs right after another's garbage. A diagnostic, not a scenario of `npm run bench`: run it
// after `npm run build`. One JSON line per variant on stdout.
//
//   VARIANTS='[{"name":"before","dist":"/abs/before/dist"},{"name":"now","dist":"/abs/now/dist"}]' \
//     node bench/interleaved.mjs
//   A variant: name, dist (a build's dist folder; default ../dist) and toolForm (run | effect, default run).
//   Builds whose `effect` resolves to the same files share its module instance (e.g. a copy of an older `dist`
//   next to a symlink to this checkout's node_modules); other builds load their own copy, which works too.
//
//   SERIAL (3000) conversations of each variant one after another, then ROUNDS (40) rounds of CONC (100) at once
//   per variant; WARMUP (harness default) unmeasured conversations of each first; FSYNC as in step-overhead.
// Per variant: the mean and p50 of a conversation run alone, its CPU time (the process's, so the writers' and
// Node's threads count), and the median conversations/s and CPU per conversation with CONC in flight.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as harness from './lib/harness.mjs';
import { makeMyclawAgent } from './lib/myclaw-agent.mjs';
import { countFromEnv as count } from './lib/env-count.mjs';

const ownDist = fileURLToPath(new URL('../dist/', import.meta.url));
const variants = (() => {
  try {
    return JSON.parse(process.env.VARIANTS || '[{"name":"this build"}]');
  } catch (error) {
    throw new Error(`VARIANTS: not JSON (${error.message})`);
  }
})();
if (!Array.isArray(variants) || variants.length === 0) throw new Error('VARIANTS: a JSON array of variants');
const SERIAL = count('SERIAL', 3000);
const ROUNDS = count('ROUNDS', 40);
const CONC = count('CONC', 100);
for (const variant of variants) {
  if (typeof variant?.name !== 'string') throw new Error(`VARIANTS: ${JSON.stringify(variant)} has no name`);
  const dist = variant.dist || ownDist;
  if (!existsSync(path.join(dist, 'Myclaw.js'))) {
    throw new Error(`VARIANTS: ${variant.name}: no build at ${dist} (a dist folder after npm run build)`);
  }
}

const agents = [];
try {
  for (const variant of variants) {
    const agent = await makeMyclawAgent({
      harness,
      dist: variant.dist || ownDist,
      fsync: process.env.FSYNC || 'batch',
      toolForm: variant.toolForm || 'run',
    });
    agents.push({ name: variant.name, agent, alone: [], aloneCpu: 0, rates: [], loadedCpu: 0 });
  }
  for (const a of agents) for (let i = 0; i < harness.WARMUP; i++) await a.agent.runOnce();

  const rotated = (round) => agents.map((_, k) => agents[(k + round) % agents.length]);
  const measured = async (a, run) => {
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await run();
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    const used = process.cpuUsage(cpu);
    return { elapsed, cpu: used.user + used.system };
  };
  for (let i = 0; i < SERIAL; i++) {
    for (const a of rotated(i)) {
      const { elapsed, cpu } = await measured(a, a.agent.runOnce);
      a.alone.push(elapsed);
      a.aloneCpu += cpu;
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const a of rotated(r)) {
      const { elapsed, cpu } = await measured(a, () => Promise.all(Array.from({ length: CONC }, a.agent.runOnce)));
      a.rates.push(CONC / (elapsed / 1e6));
      a.loadedCpu += cpu;
    }
  }

  const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
  for (const a of agents) {
    process.stdout.write(
      `${JSON.stringify({
        scenario: 'interleaved',
        variant: a.name,
        tool_form: a.agent.toolForm,
        alone_us_mean: Math.round(a.alone.reduce((sum, x) => sum + x, 0) / a.alone.length),
        alone_us_p50: Math.round(median(a.alone)),
        alone_cpu_us: Math.round(a.aloneCpu / SERIAL),
        [`conc${CONC}_runs_per_s_median`]: Math.round(median(a.rates)),
        [`conc${CONC}_cpu_us`]: Math.round(a.loadedCpu / (ROUNDS * CONC)),
        serial: SERIAL,
        rounds: ROUNDS,
        node: process.version,
      })}\n`,
    );
  }
} finally {
  for (const a of agents) await a.agent.dispose();
}

// Scenario "step-overhead": the shared peer benchmark's workload (peer-template.md) run against myclaw's
// compiled runtime (../dist), with the identical harness (lib/harness.mjs, a verbatim copy). One JSON
// line on stdout.
//
//   FSYNC=batch|always   traces.fsync of the configuration (default batch, the production default)
//   TOOL_FORM=run|effect the add tool as the async function it is (default) or wrapped in an Effect
//   STEPS WARMUP RUNS CONC CONC_RUNS HOLD   workload knobs, see lib/harness.mjs
//   BENCH_SCENARIO       the "scenario" field of the line (bench/run.mjs sets it; default step-overhead)
//   BENCH_TMPDIR         where the temporary workspace (and its trace files) goes (default os.tmpdir())
//   BENCH_KEEP=1         keep the workspace afterwards (to inspect the traces)
import { fileURLToPath } from 'node:url';
import * as harness from './lib/harness.mjs';
import { makeMyclawAgent } from './lib/myclaw-agent.mjs';

const fsync = process.env.FSYNC || 'batch';
const scenario = process.env.BENCH_SCENARIO || 'step-overhead';
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

const agent = await makeMyclawAgent({ harness, dist, fsync, toolForm: process.env.TOOL_FORM || 'run' });
process.stderr.write(
  `${scenario}: myclaw@${agent.version}, fsync=${fsync}, steps=${harness.STEPS} warmup=${harness.WARMUP} ` +
    `runs=${harness.RUNS} conc=${harness.CONC}x${harness.CONC_RUNS} hold=${harness.HOLD}, workspace ${agent.workspace}\n`,
);
try {
  // Counted before the timed runs (20 conversations to warm up, then 100): see countEffectOps.
  for (let i = 0; i < 20; i++) await agent.runOnce();
  const opsPerConversation = await agent.countEffectOps(100);
  await harness.runBenchmark({
    peer: 'myclaw',
    version: `myclaw@${agent.version}`,
    runOnce: agent.runOnce,
    extra: {
      scenario,
      fsync,
      tool_form: agent.toolForm,
      effect_ops_per_conv: Math.round(opsPerConversation),
      effect_ops_per_step: Math.round(opsPerConversation / harness.STEPS),
    },
  });
} finally {
  await agent.dispose();
}

// myclaw as a peer of the shared peer benchmark: copy this file and lib/myclaw-agent.mjs into a copy of
// the shared bench folder (next to its peer-*.mjs and lib/harness.mjs) and run
//   MYCLAW_DIST=/abs/path/to/myclaw/dist PEERS="plain ai-sdk openai-agents myclaw" ./run-all.sh
// so that myclaw's row is measured in the same session as the others. myclaw (and the Effect packages
// it uses) load from MYCLAW_DIST; from myclaw's own bench/ folder it defaults to ../dist.
// The row is named after this file: a copy named peer-myclaw-before.mjs is the row `myclaw-before`, its build
// taken from MYCLAW_DIST_BEFORE (the name's suffix, upper case), so that two builds run in one table:
//   MYCLAW_DIST_BEFORE=/abs/path/to/older/dist MYCLAW_DIST=... PEERS="ai-sdk myclaw-before myclaw" ./run-all.sh
// Same workload and code as bench/step-overhead.mjs (lib/myclaw-agent.mjs); fsync = FSYNC (default batch), the
// tool as the workload's async function (TOOL_FORM=effect: wrapped in an Effect).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as harness from './lib/harness.mjs';
import { makeMyclawAgent, resolveDist } from './lib/myclaw-agent.mjs';

const fsync = process.env.FSYNC || 'batch';
const peer = path.basename(fileURLToPath(import.meta.url), '.mjs').replace(/^peer-/, '');
const suffix = peer.replace(/^myclaw-?/, '');
const variable = suffix === '' ? 'MYCLAW_DIST' : `MYCLAW_DIST_${suffix.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
const dist = resolveDist(fileURLToPath(new URL('../dist/', import.meta.url)), variable);

const agent = await makeMyclawAgent({ harness, dist, fsync, toolForm: process.env.TOOL_FORM || 'run' });
try {
  // Counted before the timed runs (20 conversations to warm up, then 100): see countEffectOps.
  for (let i = 0; i < 20; i++) await agent.runOnce();
  const opsPerConversation = await agent.countEffectOps(100);
  await harness.runBenchmark({
    peer,
    version: `myclaw@${agent.version}`,
    runOnce: agent.runOnce,
    extra: {
      scenario: 'step-overhead',
      fsync,
      tool_form: agent.toolForm,
      effect_ops_per_conv: Math.round(opsPerConversation),
      effect_ops_per_step: Math.round(opsPerConversation / harness.STEPS),
    },
  });
} finally {
  await agent.dispose();
}

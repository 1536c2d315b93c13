// How much of a conversation outlives it in V8's young generation: the step workload's conversations run one
// after another in a child process under `--trace-gc-nvp`, and V8's own account of each young-generation
// collection (scavenge) in the measured stretch is summed. Bytes promoted to the old generation per conversation
// should be a small part of what a conversation allocates: a conversation ends in about a millisecond, a scavenge
// comes every few tens of them, so almost nothing of one should survive two. When they do, something keeps them:
// an object V8 allocated straight into the old generation (allocation-site pretenuring) that points at them is
// enough, dead or not, until the next full collection. A diagnostic, not a scenario of `npm run bench`: run it
// after `npm run build`. One JSON line on stdout.
//
//   node bench/gc-promotion.mjs                       (MYCLAW_DIST picks another build)
//   CONVERSATIONS (3000) measured after WARMUP (300); NODE_FLAGS adds V8 flags to the child, e.g.
//   NODE_FLAGS=--no-allocation-site-pretenuring to see what pretenuring costs, or --max-semi-space-size=4.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { countFromEnv as count } from './lib/env-count.mjs';

const CONVERSATIONS = count('CONVERSATIONS', 3000);
const WARMUP = count('WARMUP', 300);
const START = 'gc-promotion: measured from here';
const END = 'gc-promotion: measured to here';

if (process.env.GC_PROMOTION_CHILD === '1') {
  const harness = await import('./lib/harness.mjs');
  const { makeMyclawAgent } = await import('./lib/myclaw-agent.mjs');
  const dist = process.env.MYCLAW_DIST || fileURLToPath(new URL('../dist/', import.meta.url));
  const agent = await makeMyclawAgent({ harness, dist, fsync: 'batch' });
  try {
    for (let i = 0; i < WARMUP; i++) await agent.runOnce();
    process.stdout.write(`${START}\n`);
    for (let i = 0; i < CONVERSATIONS; i++) await agent.runOnce();
    process.stdout.write(`${END}\n`);
  } finally {
    await agent.dispose();
  }
} else {
  const flags = (process.env.NODE_FLAGS || '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...flags, '--trace-gc-nvp', fileURLToPath(import.meta.url)], {
    env: { ...process.env, GC_PROMOTION_CHILD: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => (text += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`gc-promotion: the measured process exited with ${code}`);
  const lines = text.split('\n');
  const from = lines.indexOf(START);
  const to = lines.indexOf(END);
  if (from < 0 || to < from) throw new Error('gc-promotion: the measured stretch was not found in the output');
  // A --trace-gc-nvp line: "[pid:isolate] N ms: pause=1.3 mutator=19.2 gc=s ... promoted=538392 ...".
  const fieldsOf = (line) => Object.fromEntries([...line.matchAll(/(\S+)=(\S+)/g)].map((m) => [m[1], m[2]]));
  let scavenges = 0, promoted = 0, survived = 0, scavengeMs = 0, fullGcs = 0, fullMs = 0;
  for (const line of lines.slice(from + 1, to)) {
    const fields = fieldsOf(line);
    if (fields.gc === 's') {
      scavenges += 1;
      promoted += Number(fields.promoted ?? 0);
      survived += Number(fields.new_space_survived ?? 0);
      scavengeMs += Number(fields.pause ?? 0);
    } else if (fields.gc === 'mc' || fields.gc === 'mmc') {
      fullGcs += 1;
      fullMs += Number(fields.pause ?? 0);
    }
  }
  const round = (n) => Math.round(n * 10) / 10;
  process.stdout.write(`${JSON.stringify({
    scenario: 'gc-promotion',
    conversations: CONVERSATIONS,
    node_flags: flags.join(' '),
    promoted_bytes_per_conv: Math.round(promoted / CONVERSATIONS),
    scavenges,
    survived_bytes_per_scavenge: scavenges === 0 ? 0 : Math.round(survived / scavenges),
    scavenge_us_per_conv: round((1000 * scavengeMs) / CONVERSATIONS),
    full_gcs: fullGcs,
    full_gc_ms: round(fullMs),
    node: process.version,
  })}\n`);
}

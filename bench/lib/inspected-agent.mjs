// What the in-process diagnostics share: the step workload's agent (the build in MYCLAW_DIST, else this
// checkout's), warmed up, with an inspector session on this process for the profiler they run.
import inspector from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import * as harness from './harness.mjs';
import { makeMyclawAgent } from './myclaw-agent.mjs';

/**
 * Runs `warmup` conversations, then `body(agent, session)` with the session connected; the session and the agent
 * are closed afterwards, whatever `body` did.
 */
export async function withInspectedAgent(warmup, body) {
  const dist = process.env.MYCLAW_DIST || fileURLToPath(new URL('../../dist/', import.meta.url));
  const agent = await makeMyclawAgent({ harness, dist, fsync: 'batch' });
  const session = new inspector.Session();
  try {
    for (let i = 0; i < warmup; i++) await agent.runOnce();
    session.connect();
    return await body(agent, session);
  } finally {
    session.disconnect();
    await agent.dispose();
  }
}

/** Where a profiled function is written, shortened: its package's path, or its path from the build's `dist/`. */
export const shortFile = (url) =>
  url.includes('/node_modules/') ? url.replace(/^.*node_modules\//, '') : url.replace(/^.*\/dist\//, 'dist/');

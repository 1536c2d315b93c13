// Scenario "cold-start", against the built command line (../dist/cli/myclaw.cjs; npm run build first): the
// whole process, from spawn to exit (or to the first /health answer), median of COLD_RUNS runs after one
// unmeasured run. One JSON line on stdout:
//   help_ms               myclaw --help
//   budget_ms             myclaw budget, on a workspace that exists
//   chat_ms               myclaw chat "..." with the scripted provider (one turn: trace, audit record, budget)
//   serve_health_ms       node dist/cli/myclaw.cjs serve, until GET /health answers 200
//   npm_start_health_ms   npm start (npm's own start-up included), until GET /health answers 200
//   node_baseline_ms      node -e 0: the floor on this machine right now (a loaded machine raises every figure)
//   npm_empty_ms          npm run of a script that runs `node -e 0`: what npm start costs before myclaw's code
//   node_server_floor_ms  a one-route node:http server, until GET /health answers 200 (bench/lib/server-floor.mjs)
//   effect_server_floor_ms  the same route on the Effect packages serve runs, bundled and started from V8's code
//                         cache as the command line is: what an Effect HTTP server pays here before its own work
//   npm_start_effect_floor_ms  npm start of that one-route Effect server, until /health answers: the floor of
//                         npm_start_health_ms on this machine
//   node_extra_ca_certs   whether NODE_EXTRA_CA_CERTS is set (the commands inherit it): Node 20 then reads and
//                         parses that certificate file, and builds its whole root store, when each process
//                         starts, before any script runs (about 45 ms a process on the 2-core machine; npm start
//                         pays it twice, for npm and for node)
//   node_baseline_without_extra_ca_ms  node -e 0 with NODE_EXTRA_CA_CERTS unset, when it is set: what that costs
//                         each process here. `env -u NODE_EXTRA_CA_CERTS npm run bench -- cold-start` measures
//                         every command without it
//   *_min_ms              the fastest run of each, for the same
//
// The unmeasured run also writes each command's V8 code cache (src/cli/CodeCache.ts): the measured runs start from
// it. MYCLAW_CODE_CACHE=off measures the ES modules without it.
//
//   COLD_RUNS (default 5)
//   COLD_CLI        the command line measured, relative to this checkout (default dist/cli/myclaw.cjs): another
//                   build's (e.g. ../before/dist/cli/myclaw.cjs; myclaw.mjs in builds without it) to compare two builds
//                   run alternately in one session; npm_start_health_ms always measures this checkout's `npm start`
//   BENCH_SCENARIO  the "scenario" field (bench/run.mjs sets it; default cold-start)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, scriptedWorkspace, timedServe } from './lib/cold-serve.mjs';
import { writeServerFloors } from './lib/server-floor.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = path.join(root, process.env.COLD_CLI || 'dist/cli/myclaw.cjs');
const scenario = process.env.BENCH_SCENARIO || 'cold-start';
const RUNS = Number(process.env.COLD_RUNS || 5);
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);

if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build`);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const round = (ms) => Math.round(ms);

/** Runs a command to its exit; its wall time in ms. A non-zero exit is an error naming the command. */
const timed = (command, args, env, cwd = root) =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk) => {
      errors += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const elapsed = performance.now() - started;
      if (code === 0) resolve(elapsed);
      else reject(new Error(`${[command, ...args].join(' ')} exited with ${code}:\n${errors}`));
    });
  });

/** One unmeasured run, then RUNS measured ones: the median and the fastest. */
const measure = async (name, once) => {
  await once();
  const times = [];
  for (let i = 0; i < RUNS; i++) times.push(await once());
  log(`${name}: ${times.map(round).join(' ')} ms`);
  return { median: round(median(times)), min: round(Math.min(...times)) };
};

const { home, env } = scriptedWorkspace('myclaw-bench-cold-');
const node = process.execPath;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

try {
  log(`${RUNS} runs each (after one unmeasured run), workspace ${home}`);
  const baseline = await measure('node -e 0', () => timed(node, ['-e', '0'], env));
  const extraCa = Boolean(process.env.NODE_EXTRA_CA_CERTS);
  const { NODE_EXTRA_CA_CERTS: _, ...withoutExtraCa } = env;
  const bareBaseline = extraCa
    ? await measure('node -e 0 without NODE_EXTRA_CA_CERTS', () => timed(node, ['-e', '0'], withoutExtraCa))
    : undefined;
  const serve = await measure('serve to /health', async () =>
    timedServe(node, [cli, 'serve'], env, await freePort(), root));
  const npmStart = await measure('npm start to /health', async () =>
    timedServe(npm, ['start', '--silent'], env, await freePort(), root));
  const chat = await measure('chat', () => timed(node, [cli, 'chat', 'remember: blue'], env));
  const help = await measure('--help', () => timed(node, [cli, '--help'], env));
  const budget = await measure('budget', () => timed(node, [cli, 'budget'], env));
  const floorDir = path.join(home, 'floor');
  fs.mkdirSync(floorDir);
  const floor = await writeServerFloors(floorDir);
  const npmEmpty = await measure('npm run of node -e 0', () => timed(npm, ['run', '--silent', 'empty'], env, floorDir));
  const nodeServer = await measure('one-route node:http server to /health', async () =>
    timedServe(node, [floor.node], env, await freePort(), floorDir));
  const effectServer = await measure('one-route Effect server to /health', async () =>
    timedServe(node, [floor.effect], env, await freePort(), floorDir));
  const npmEffect = await measure('npm start of the one-route Effect server to /health', async () =>
    timedServe(npm, ['start', '--silent'], env, await freePort(), floorDir));
  process.stdout.write(
    `${JSON.stringify({
      scenario,
      runs: RUNS,
      help_ms: help.median,
      budget_ms: budget.median,
      chat_ms: chat.median,
      serve_health_ms: serve.median,
      npm_start_health_ms: npmStart.median,
      node_baseline_ms: baseline.median,
      npm_empty_ms: npmEmpty.median,
      node_server_floor_ms: nodeServer.median,
      effect_server_floor_ms: effectServer.median,
      npm_start_effect_floor_ms: npmEffect.median,
      node_extra_ca_certs: extraCa,
      ...(bareBaseline === undefined ? {} : { node_baseline_without_extra_ca_ms: bareBaseline.median }),
      help_min_ms: help.min,
      budget_min_ms: budget.min,
      chat_min_ms: chat.min,
      serve_health_min_ms: serve.min,
      npm_start_health_min_ms: npmStart.min,
      node_baseline_min_ms: baseline.min,
      loadavg_1m: Math.round(os.loadavg()[0] * 100) / 100,
      node: process.version,
    })}\n`,
  );
} finally {
  fs.rmSync(home, { recursive: true, force: true });
}

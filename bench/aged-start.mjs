// Scenario "aged-start", against the built command line (../dist/cli/myclaw.cjs; npm run build first): what a
// workspace's history adds to a start. AGED_TURNS turns are recorded through a real `myclaw serve` (scripted
// provider, 16 clients, 200 sessions: traces, audit records, session turns), then `serve` is started until
// GET /health answers 200 on that workspace and on a fresh one, alternately, AGED_RUNS times each after one
// unmeasured start of each. One JSON line on stdout, medians in milliseconds:
//   fresh_serve_health_ms   a workspace with no history
//   aged_serve_health_ms    the workspace with AGED_TURNS turns, its caches (trace index, audit query index)
//                           brought up to date before each start (by `trace list` and `audit query`, not timed)
//   stale_serve_health_ms   the same with both caches removed before each start: the most a start can pay for
//                           the turns written since the caches were last brought up to date
//   record_s                how long recording the turns took (not a measure of anything here)
// and with AGED_BEFORE, before_fresh_serve_health_ms, before_aged_serve_health_ms and before_stale_serve_health_ms:
// another build's, each start of it just before the same start of this one, on the same workspaces.
//
//   AGED_TURNS (default 5000)  AGED_RUNS (default 5)
//   AGED_CLI        the command line measured, relative to this checkout (default dist/cli/myclaw.cjs): another
//                   build's, to measure it alone; the turns are recorded by this checkout's
//   AGED_BEFORE     another build's command line, relative to this checkout, measured alternately with AGED_CLI
//   BENCH_SCENARIO  the "scenario" field (bench/run.mjs sets it; default aged-start)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, scriptedWorkspace, timedServe } from './lib/cold-serve.mjs';
import { postTurn, startServe } from './lib/serve.mjs';

const scenario = process.env.BENCH_SCENARIO || 'aged-start';
const TURNS = Number(process.env.AGED_TURNS || 5000);
const RUNS = Number(process.env.AGED_RUNS || 5);
const CLIENTS = 16;
if (!(Number.isInteger(TURNS) && TURNS > 0)) throw new Error(`AGED_TURNS must be a positive integer, not ${TURNS}`);
if (!(Number.isInteger(RUNS) && RUNS > 0)) throw new Error(`AGED_RUNS must be a positive integer, not ${RUNS}`);
const root = fileURLToPath(new URL('../', import.meta.url));
const cli = path.resolve(root, process.env.AGED_CLI || 'dist/cli/myclaw.cjs');
if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build`);
const thisCli = path.join(root, 'dist/cli/myclaw.cjs');
const before = process.env.AGED_BEFORE ? path.resolve(root, process.env.AGED_BEFORE) : undefined;
if (before !== undefined && !fs.existsSync(before)) throw new Error(`AGED_BEFORE: ${before} is missing`);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]);
};

/** AGED_TURNS turns recorded in `env`'s workspace by this checkout's serve: every one answered 200. */
const record = async (env) => {
  const { child, address } = await startServe({
    MYCLAW_HOME: env.MYCLAW_HOME,
    MYCLAW_KEY_DIR: env.MYCLAW_KEY_DIR,
    MYCLAW_ADMIN_TOKEN: env.MYCLAW_ADMIN_TOKEN,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    let next = 0;
    const client = async () => {
      while (next < TURNS) {
        const i = next++;
        const status = await postTurn({
          url: `${address}/v1/turns`,
          agent,
          token: env.MYCLAW_ADMIN_TOKEN,
          message: `note ${i}`,
          sessionId: `s${i % 200}`,
        });
        if (status !== 200) throw new Error(`POST /v1/turns answered ${status} while recording turn ${i}`);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
  } finally {
    agent.destroy();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
};

/** The caches a start brings up to date from the files: what they would be had nothing read them since. */
const dropCaches = (home) => {
  fs.rmSync(path.join(home, '.audit', 'traces', 'index'), { recursive: true, force: true });
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    fs.rmSync(path.join(home, '.audit', `index.sqlite${suffix}`), { force: true });
  }
};

/** The trace index and the audit query index brought up to date by this checkout's commands (not timed). */
const refreshCaches = (env) => {
  for (const args of [['trace', 'list', '--session', 'none'], ['audit', 'query', '--limit', '1']]) {
    const done = spawnSync(process.execPath, [thisCli, ...args], { env, cwd: root, encoding: 'utf8' });
    if (done.status !== 0) throw new Error(`myclaw ${args.join(' ')} exited with ${done.status}: ${done.stderr}`);
  }
};

const aged = scriptedWorkspace('myclaw-bench-aged-');
const fresh = scriptedWorkspace('myclaw-bench-fresh-');
try {
  const recording = performance.now();
  await record(aged.env);
  const recordS = (performance.now() - recording) / 1000;
  const port = await freePort();
  const builds = before === undefined ? [['', cli]] : [['before_', before], ['', cli]];
  const times = {};
  const serve = (file, env) => timedServe(process.execPath, [file, 'serve'], env, port, root);
  for (const [, file] of builds) {
    await serve(file, fresh.env);
    await serve(file, aged.env);
  }
  const timed = async (prefix, file, state, env) => {
    (times[`${prefix}${state}`] ??= []).push(await serve(file, env));
  };
  for (let run = 0; run < RUNS; run++) {
    for (const [prefix, file] of builds) await timed(prefix, file, 'fresh', fresh.env);
    for (const [prefix, file] of builds) {
      refreshCaches(aged.env);
      await timed(prefix, file, 'aged', aged.env);
    }
    for (const [prefix, file] of builds) {
      dropCaches(aged.home);
      await timed(prefix, file, 'stale', aged.env);
    }
  }
  for (const [name, values] of Object.entries(times)) {
    process.stderr.write(`aged-start: ${name}: ${values.map((value) => Math.round(value)).join(' ')} ms\n`);
  }
  const medians = Object.fromEntries(
    Object.entries(times).map(([name, values]) => [`${name}_serve_health_ms`, median(values)]),
  );
  console.log(
    JSON.stringify({
      scenario,
      turns: TURNS,
      runs: RUNS,
      ...medians,
      record_s: Number(recordS.toFixed(1)),
      loadavg_1m: Number(os.loadavg()[0].toFixed(1)),
      node: process.version,
    }),
  );
} finally {
  fs.rmSync(aged.home, { recursive: true, force: true });
  fs.rmSync(fresh.home, { recursive: true, force: true });
}

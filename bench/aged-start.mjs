// Scenario "aged-start", against the built command line (../dist/cli/myclaw.cjs; npm run build first): what a
// workspace's history adds to a start. AGED_TURNS turns are recorded through a real `myclaw serve` (scripted
// provider, 16 clients, 200 sessions: traces, audit records, session turns), then `serve` is started until
// GET /health answers 200 on that workspace and on a fresh one, alternately, AGED_RUNS times each after one
// unmeasured start of each. One JSON line on stdout, medians in milliseconds:
//   fresh_serve_health_ms   a workspace with no history
//   aged_serve_health_ms    the workspace with AGED_TURNS turns, its caches (trace index, audit query index) as
//                           the previous start left them
//   stale_serve_health_ms   the same with both caches removed before each start: the most a start can pay for
//                           the turns written since the caches were last brought up to date
//   record_s                how long recording the turns took (not a measure of anything here)
//
//   AGED_TURNS (default 5000)  AGED_RUNS (default 5)
//   AGED_CLI        the command line measured, relative to this checkout (default dist/cli/myclaw.cjs): another
//                   build's, to compare two builds run alternately; the turns are recorded by this checkout's
//   BENCH_SCENARIO  the "scenario" field (bench/run.mjs sets it; default aged-start)
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

const aged = scriptedWorkspace('myclaw-bench-aged-');
const fresh = scriptedWorkspace('myclaw-bench-fresh-');
try {
  const recording = performance.now();
  await record(aged.env);
  const recordS = (performance.now() - recording) / 1000;
  const port = await freePort();
  const serve = (env) => timedServe(process.execPath, [cli, 'serve'], env, port, root);
  await serve(fresh.env);
  await serve(aged.env);
  const times = { fresh: [], aged: [], stale: [] };
  for (let run = 0; run < RUNS; run++) {
    times.fresh.push(await serve(fresh.env));
    times.aged.push(await serve(aged.env));
    dropCaches(aged.home);
    times.stale.push(await serve(aged.env));
  }
  for (const [name, values] of Object.entries(times)) {
    process.stderr.write(`aged-start: ${name}: ${values.map((value) => Math.round(value)).join(' ')} ms\n`);
  }
  console.log(
    JSON.stringify({
      scenario,
      turns: TURNS,
      runs: RUNS,
      fresh_serve_health_ms: median(times.fresh),
      aged_serve_health_ms: median(times.aged),
      stale_serve_health_ms: median(times.stale),
      record_s: Number(recordS.toFixed(1)),
      loadavg_1m: Number(os.loadavg()[0].toFixed(1)),
      node: process.version,
    }),
  );
} finally {
  fs.rmSync(aged.home, { recursive: true, force: true });
  fs.rmSync(fresh.home, { recursive: true, force: true });
}

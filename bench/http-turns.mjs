// Scenario "http-turns", against the built command line (../dist/cli/myclaw.cjs; npm run build first): a real
// `myclaw serve` on 127.0.0.1 with the scripted provider (one answer, looped), TURNS_CONC clients posting
// POST /v1/turns back to back (keep-alive) for TURNS_SECONDS after a short warm-up. Every turn is whole: policy,
// budget reservation, the trace persisted and its signed audit record. One JSON line on stdout:
//   turns_per_s          turns answered 200 per second, all clients together
//   p50_ms, p99_ms       latency of one POST /v1/turns, from request to the whole answer
//   status_codes         how many answers of each status (anything but 200 is a finding)
//   server_cpu_ms_per_turn  CPU time of the serve process (all its threads: user + system, from /proc) per turn
//                        answered in the measured seconds: steadier than turns/s on a shared machine; null where
//                        /proc is missing
//
//   TURNS_SECONDS (default 5)  TURNS_CONC (default 16)
//   TURNS_TOTAL     instead of TURNS_SECONDS, exactly this many turns (after 200 unmeasured ones): the sessions grow
//                   to the same length whichever build answers, so server_cpu_ms_per_turn compares builds
//   TURNS_CLI       the command line served, relative to this checkout (default dist/cli/myclaw.cjs): another
//                   build's (e.g. ../before/dist/cli/myclaw.cjs), to compare two builds run alternately
//   BENCH_SCENARIO  the "scenario" field (bench/run.mjs sets it; default http-turns)
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, postTurn, startServe } from './lib/serve.mjs';

const scenario = process.env.BENCH_SCENARIO || 'http-turns';
const SECONDS = Number(process.env.TURNS_SECONDS || 5);
const CONC = Number(process.env.TURNS_CONC || 16);
const TOTAL = process.env.TURNS_TOTAL ? Number(process.env.TURNS_TOTAL) : undefined;
const WARMUP_TURNS = 200;
if (TOTAL !== undefined && !(Number.isInteger(TOTAL) && TOTAL > 0)) {
  throw new Error(`TURNS_TOTAL must be a positive whole number of turns, got ${JSON.stringify(process.env.TURNS_TOTAL)}`);
}
const TOKEN = 'bench-http-turns';
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);

const serveCli = process.env.TURNS_CLI ? path.resolve(fileURLToPath(new URL('..', import.meta.url)), process.env.TURNS_CLI) : cli;
const serveAt = (home) =>
  startServe({ MYCLAW_HOME: home, MYCLAW_KEY_DIR: path.join(home, '.keys'), MYCLAW_ADMIN_TOKEN: TOKEN }, serveCli);

if (!fs.existsSync(serveCli)) throw new Error(`${serveCli} is missing: run npm run build`);

/** CPU time the process `pid` has used so far (user + system, every thread), in ms; undefined without /proc. */
const cpuMs = (pid) => {
  try {
    // After the command name (in parentheses, which may hold spaces): utime and stime, the 12th and 13th fields, in
    // the 100 Hz ticks /proc reports.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
};

async function hammer(address, pid) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONC });
  const url = new URL('/v1/turns', address);
  const codes = new Map();
  const latencies = [];
  let session = 0;
  const post = async (record) => {
    const started = performance.now();
    const status = await postTurn({
      url,
      agent,
      token: TOKEN,
      message: 'Remember: the meeting is at 10.',
      sessionId: `bench-${session++ % CONC}`,
    });
    if (record) {
      latencies.push(performance.now() - started);
      codes.set(status, (codes.get(status) ?? 0) + 1);
    }
  };
  // For `seconds`, or for exactly `count` turns when one is given (the sessions then end as long in every run).
  const run = async (seconds, count, record) => {
    const until = performance.now() + seconds * 1000;
    let left = count ?? Number.POSITIVE_INFINITY;
    await Promise.all(Array.from({ length: CONC }, async () => {
      while (left-- > 0 && (count !== undefined || performance.now() < until)) await post(record);
    }));
  };
  try {
    await run(0.5, TOTAL === undefined ? undefined : WARMUP_TURNS, false);
    const started = performance.now();
    const cpuBefore = cpuMs(pid);
    await run(SECONDS, TOTAL, true);
    const cpuAfter = cpuMs(pid);
    const elapsed = (performance.now() - started) / 1000;
    const answered = codes.get(200) ?? 0;
    latencies.sort((a, b) => a - b);
    const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 10) / 10;
    return {
      turnsPerS: Math.round((answered / elapsed) * 10) / 10,
      cpuMsPerTurn:
        cpuBefore === undefined || cpuAfter === undefined || answered === 0
          ? null
          : Math.round(((cpuAfter - cpuBefore) / answered) * 1000) / 1000,
      p50: at(0.5),
      p99: at(0.99),
      count: latencies.length,
      codes: Object.fromEntries(codes),
    };
  } finally {
    agent.destroy();
  }
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'myclaw-bench-turns-'));
fs.writeFileSync(path.join(home, 'script.json'), JSON.stringify([{ text: 'Noted.' }]));
fs.writeFileSync(
  path.join(home, 'myclaw.json'),
  JSON.stringify({ tiers: { frontier: [{ provider: 'scripted', script: 'script.json', loop: true }] } }),
);
let child;
try {
  log(`${CONC} clients for ${TOTAL === undefined ? `${SECONDS} s` : `${TOTAL} turns`}`);
  const served = await serveAt(home);
  child = served.child;
  const result = await hammer(served.address, child.pid);
  if ((result.codes[200] ?? 0) === 0) throw new Error(`no turn answered 200: ${JSON.stringify(result.codes)}`);
  process.stdout.write(
    `${JSON.stringify({
      scenario,
      turns_per_s: result.turnsPerS,
      p50_ms: result.p50,
      p99_ms: result.p99,
      server_cpu_ms_per_turn: result.cpuMsPerTurn,
      turns: result.count,
      status_codes: result.codes,
      concurrency: CONC,
      ...(TOTAL === undefined ? { seconds: SECONDS } : { total: TOTAL }),
      node: process.version,
    })}\n`,
  );
} finally {
  if (child !== undefined && child.exitCode === null) {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  }
  fs.rmSync(home, { recursive: true, force: true });
}

// Scenario "observability", against the compiled runtime (../dist; npm run build first). One JSON
// line on stdout:
//   metrics_render_ms_10k_series  median time of what GET /metrics does with 10,000 label combinations in the
//                                 registry: Metric.snapshot, the myclaw_/process_ filter, renderPrometheus
//   health_rps                    GET /health answered per second by a real `myclaw serve` on 127.0.0.1
//                                 (keep-alive, HEALTH_CONC concurrent clients for HEALTH_SECONDS)
//
//   RENDER_RUNS (default 30)  HEALTH_SECONDS (default 3)  HEALTH_CONC (default 16)
//   BENCH_SCENARIO  the "scenario" field (bench/run.mjs sets it; default observability)
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from './lib/serve.mjs';
import { Effect, Metric } from 'effect';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const scenario = process.env.BENCH_SCENARIO || 'observability';
const RENDER_RUNS = Number(process.env.RENDER_RUNS || 30);
const HEALTH_SECONDS = Number(process.env.HEALTH_SECONDS || 3);
const HEALTH_CONC = Number(process.env.HEALTH_CONC || 16);
const SERIES = 10_000;
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);

const { renderPrometheus } = await import(path.join(dist, 'http/Prometheus.js'));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

async function renderBenchmark() {
  const counter = Metric.counter('myclaw_bench_series_total', { description: 'bench series', incremental: true });
  Effect.runSync(
    Effect.forEach(Array.from({ length: SERIES }, (_, i) => i), (i) =>
      Metric.increment(
        counter.pipe(Metric.tagged('tool', `tool_${i % 100}`), Metric.tagged('channel', `ch_${Math.floor(i / 100)}`)),
      )),
  );
  const exposed = /^(myclaw|process)_/;
  const scrape = Effect.map(Metric.snapshot, (pairs) =>
    renderPrometheus(pairs.filter((p) => exposed.test(p.metricKey.name))));
  let lines = 0;
  const times = [];
  for (let run = 0; run < RENDER_RUNS + 3; run++) {
    const started = performance.now();
    const text = Effect.runSync(scrape);
    const elapsed = performance.now() - started;
    if (run >= 3) times.push(elapsed);
    lines = text.split('\n').filter((line) => line.startsWith('myclaw_bench_series_total{')).length;
  }
  if (lines !== SERIES) throw new Error(`rendered ${lines} series, expected ${SERIES}`);
  return Math.round(median(times) * 100) / 100;
}

const serveAt = (home) => startServe({ MYCLAW_HOME: home, MYCLAW_ADMIN_TOKEN: 'bench' });

async function healthBenchmark() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'myclaw-bench-obs-'));
  fs.writeFileSync(path.join(home, 'script.json'), '[]');
  fs.writeFileSync(
    path.join(home, 'myclaw.json'),
    JSON.stringify({ tiers: { frontier: [{ provider: 'scripted', script: 'script.json' }] } }),
  );
  let child;
  try {
    const served = await serveAt(home);
    child = served.child;
    return await hammer(served.address);
  } finally {
    if (child !== undefined && child.exitCode === null) {
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    }
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function hammer(address) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: HEALTH_CONC });
  const url = new URL('/health', address);
  const codes = new Map();
  const get = () =>
    new Promise((resolve, reject) => {
      const request = http.get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          codes.set(response.statusCode, (codes.get(response.statusCode) ?? 0) + 1);
          resolve();
        });
      });
      request.on('error', reject);
    });
  const run = async (seconds) => {
    const until = performance.now() + seconds * 1000;
    let done = 0;
    await Promise.all(Array.from({ length: HEALTH_CONC }, async () => {
      while (performance.now() < until) {
        await get();
        done += 1;
      }
    }));
    return done;
  };
  try {
    await run(0.5);
    codes.clear();
    const started = performance.now();
    const done = await run(HEALTH_SECONDS);
    const rps = Math.round(done / ((performance.now() - started) / 1000));
    return { rps, codes: Object.fromEntries(codes) };
  } finally {
    agent.destroy();
  }
}

log(`render: ${SERIES} series, ${RENDER_RUNS} runs; health: ${HEALTH_CONC} clients for ${HEALTH_SECONDS} s`);
const metricsRenderMs = await renderBenchmark();
const health = await healthBenchmark();
process.stdout.write(
  `${JSON.stringify({
    scenario,
    metrics_render_ms_10k_series: metricsRenderMs,
    health_rps: health.rps,
    health_status_codes: health.codes,
    health_concurrency: HEALTH_CONC,
    node: process.version,
  })}\n`,
);

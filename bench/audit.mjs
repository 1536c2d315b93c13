// Scenario "audit": the file audit log of ../dist (run `npm run build` first). One JSON line on stdout:
//   { scenario, appends_per_s_fsync_always, appends_per_s_fsync_batch, query_ms_1m_records, ... }
//
// Appends: APPENDS records (default 4000) from CONC fibers (default 16) through makeAuditLogFile, fsync
// "always" (each append returns once synced; concurrent appends share a sync) and "batch"; plus the same
// with one appender awaiting each record (the latency-bound case).
// Query: a fixture of RECORDS records (default 1,000,000) over twelve months, written directly as sealed lines
// with the log's own sealing functions and keys (eleven months then gzip-compressed, as rotation leaves them),
// then the first query (which builds the SQLite index from the files) and QUERIES warm queries of different
// shapes; query_ms_1m_records is their median, query_ms_max the slowest.
//
//   BENCH_TMPDIR   where the temporary folders go (default os.tmpdir());  BENCH_KEEP=1 keeps them
//   VERIFY=1       also times verifyIntegrity with the seed (every record's signature) over the whole fixture
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { NodeContext } from '@effect/platform-node';
import { Effect, Logger, LogLevel } from 'effect';

const dist = new URL('../dist/', import.meta.url);
const { makeAuditLogFile } = await import(new URL('layers/AuditLogFile.js', dist));
const { sealLine, sha256, genesisOf } = await import(new URL('layers/audit/Seal.js', dist));
const { epochOf, nextKey } = await import(new URL('layers/audit/Keys.js', dist));

const scenario = process.env.BENCH_SCENARIO || 'audit';
const APPENDS = Number(process.env.APPENDS || 4000);
const CONC = Number(process.env.CONC || 16);
const RECORDS = Number(process.env.RECORDS || 1_000_000);
const QUERIES = Number(process.env.QUERIES || 25);
const base = mkdtempSync(join(process.env.BENCH_TMPDIR || tmpdir(), 'myclaw-bench-audit-'));
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);

const run = (effect) =>
  Effect.runPromise(effect.pipe(Effect.scoped, Effect.provide(NodeContext.layer), Logger.withMinimumLogLevel(LogLevel.Error)));

const trace = (at, n, sender) => ({
  kind: 'trace', at, trace_id: `t-${n}`, session_id: `s-${n % 97}`, channel: 'telegram', sender,
  started_at: at, finished_at: at, user_message: `request number ${n}`, final_response: `answer ${n}`,
  steps_count: 3, tool_calls: [{ name: 'fs_read', args_summary: 'notes.md', outcome: 'success' }],
  cost_usd: 0.0012, wall_time_ms: 840, outcome: 'success', approvals_requested: 0, approvals_granted: 0,
});
const decision = (at, n, sender) => ({
  kind: 'tool_decision', at, trace_id: `t-${n}`, session_id: `s-${n % 97}`, sender, tool_name: 'fs_write',
  target: 'notes.md', args_hash: 'sha256:00', decision: 'allow', rule: 'default', approval_request_id: null,
});

async function appendsPerSecond(fsync, concurrency) {
  const dir = join(base, `appends-${fsync}-${concurrency}`);
  return run(Effect.gen(function* () {
    const audit = yield* makeAuditLogFile({ auditDir: join(dir, 'ws', '.audit'), keyDir: join(dir, 'keys'), fsync });
    yield* audit.append(trace(new Date().toISOString(), -1, 'bench'));
    const started = performance.now();
    yield* Effect.forEach(
      Array.from({ length: concurrency }, (_, f) => f),
      (f) => Effect.gen(function* () {
        for (let i = f; i < APPENDS; i += concurrency) {
          const at = new Date().toISOString();
          yield* audit.append(i % 5 === 0 ? decision(at, i, 'bench') : trace(at, i, 'bench'));
        }
      }),
      { concurrency: 'unbounded', discard: true },
    );
    const seconds = (performance.now() - started) / 1000;
    return Math.round(APPENDS / seconds);
  }));
}

/** Writes the fixture as the log would have: chains, per-day keys, checkpoints omitted (not needed to query). */
async function writeFixture(auditDir, keyDir) {
  mkdirSync(auditDir, { recursive: true });
  mkdirSync(keyDir, { recursive: true, mode: 0o700 });
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  const span = Date.parse('2026-01-01T00:00:00.000Z') - start;
  const seed = { epoch: epochOf(start), key: randomBytes(32) };
  writeFileSync(join(keyDir, 'audit-seed.json'), JSON.stringify({ myclaw_audit: 'seed', version: 1, epoch: seed.epoch, key: seed.key.toString('hex') }) + '\n', { mode: 0o600 });
  let key = seed;
  const chains = { monthly: { seq: 0, prev: genesisOf('monthly') }, 'approvals.jsonl': { seq: 0, prev: genesisOf('approvals.jsonl') } };
  const months = new Map();
  const approvals = [];
  for (let n = 0; n < RECORDS; n++) {
    const millis = start + Math.floor((n * span) / RECORDS);
    const at = new Date(millis).toISOString();
    const epoch = epochOf(millis);
    while (key.epoch < epoch) key = { epoch: key.epoch + 1, key: nextKey(key.key) };
    const sender = `telegram:@user${n % 50}`;
    const isDecision = n % 10 === 0;
    const chain = isDecision ? chains['approvals.jsonl'] : chains.monthly;
    const line = sealLine(isDecision ? decision(at, n, sender) : trace(at, n, sender), { seq: chain.seq + 1, prev: chain.prev, epoch: key.epoch }, key.key);
    chain.seq += 1;
    chain.prev = sha256(line);
    if (isDecision) approvals.push(line);
    else {
      const month = at.slice(0, 7);
      if (!months.has(month)) months.set(month, []);
      months.get(month).push(line);
    }
  }
  writeFileSync(join(keyDir, 'audit-key.json'), JSON.stringify({ myclaw_audit: 'key', version: 1, epoch: key.epoch, key: key.key.toString('hex') }) + '\n', { mode: 0o600 });
  writeFileSync(join(auditDir, 'approvals.jsonl'), approvals.join('\n') + '\n');
  const names = [...months.keys()].sort();
  for (const month of names) {
    const text = months.get(month).join('\n') + '\n';
    const file = join(auditDir, `${month}.jsonl`);
    if (month === names.at(-1)) writeFileSync(file, text);
    else await pipeline(Readable.from([Buffer.from(text)]), createGzip(), createWriteStream(`${file}.gz`));
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  const alwaysConcurrent = await appendsPerSecond('always', CONC);
  const batchConcurrent = await appendsPerSecond('batch', CONC);
  const alwaysSequential = await appendsPerSecond('always', 1);
  const batchSequential = await appendsPerSecond('batch', 1);
  log(`appends/s: always ${alwaysConcurrent} (x${CONC}), ${alwaysSequential} (x1); batch ${batchConcurrent} (x${CONC}), ${batchSequential} (x1)`);

  const auditDir = join(base, 'fixture', 'ws', '.audit');
  const keyDir = join(base, 'fixture', 'keys');
  let t = performance.now();
  await writeFixture(auditDir, keyDir);
  const fixtureS = (performance.now() - t) / 1000;
  log(`fixture: ${RECORDS} sealed records written in ${fixtureS.toFixed(1)} s`);

  const result = await run(Effect.gen(function* () {
    const audit = yield* makeAuditLogFile({ auditDir, keyDir, fsync: 'always' });
    let t0 = performance.now();
    const first = yield* audit.query({ limit: 20 });
    const indexBuildMs = performance.now() - t0;
    if (first.length !== 20) throw new Error(`expected 20 records, got ${first.length}`);
    const mid = Date.parse('2025-07-01T00:00:00.000Z');
    const shapes = [
      { limit: 20 },
      { kind: 'trace', since: Date.parse('2025-04-01T00:00:00.000Z'), until: Date.parse('2025-04-30T23:59:59.999Z'), limit: 20 },
      { kind: 'tool_decision', limit: 100 },
      { sender: 'telegram:@user7', limit: 20 },
      { sender: 'telegram:@user7', kind: 'trace', since: mid, limit: 50 },
      { since: mid, until: mid + 86_400_000, limit: 1000 },
    ];
    const times = [];
    for (let i = 0; i < QUERIES; i++) {
      const shape = shapes[i % shapes.length];
      t0 = performance.now();
      const found = yield* audit.query(shape);
      times.push(performance.now() - t0);
      if (found.length === 0) throw new Error(`no record for ${JSON.stringify(shape)}`);
    }
    let verifyS;
    if (process.env.VERIFY === '1') {
      t0 = performance.now();
      const report = yield* audit.verifyIntegrity({ seed: readFileSync(join(keyDir, 'audit-seed.json')) });
      verifyS = (performance.now() - t0) / 1000;
      log(`verify: ${report.problems.filter((p) => p.problem !== 'unanchored').length} breaks`);
    }
    return { indexBuildMs, times, verifyS };
  }));
  const line = {
    scenario,
    appends_per_s_fsync_always: alwaysConcurrent,
    appends_per_s_fsync_batch: batchConcurrent,
    query_ms_1m_records: Number(median(result.times).toFixed(2)),
    query_ms_max: Number(Math.max(...result.times).toFixed(2)),
    appends_per_s_fsync_always_sequential: alwaysSequential,
    appends_per_s_fsync_batch_sequential: batchSequential,
    appenders: CONC,
    records: RECORDS,
    index_build_s: Number((result.indexBuildMs / 1000).toFixed(1)),
    fixture_s: Number(fixtureS.toFixed(1)),
    ...(result.verifyS === undefined ? {} : { verify_s: Number(result.verifyS.toFixed(1)) }),
  };
  process.stdout.write(JSON.stringify(line) + '\n');
} finally {
  if (process.env.BENCH_KEEP !== '1') rmSync(base, { recursive: true, force: true });
  else log(`kept ${base}`);
}

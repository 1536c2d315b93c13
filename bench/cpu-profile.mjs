// Where a conversation of the step workload spends its CPU time: V8's sampling CPU profiler over conversations run
// one after another, the samples' self time summed by part of the work (each sample is given to the first part its
// stack matches, innermost frame first: a native call such as a write counts for whoever made it). A diagnostic,
// not a scenario of `npm run bench` (the profiler slows the run down, so compare its shares, and its microseconds
// only between builds profiled in one session): run it after `npm run build`. One JSON line on stdout.
//
//   node bench/cpu-profile.mjs                         MYCLAW_DIST picks another build (e.g. an older commit's)
//   CONVERSATIONS (2000) profiled after WARMUP (1000); INTERVAL (100), microseconds between samples; TOP (20) sites;
//   PROFILE_OUT=file.cpuprofile also writes the profile (Chrome's DevTools and `speedscope` open it).
//
//   us_per_conversation   wall time per conversation while profiled
//   by_part               { part: [µs per conversation, % of the samples] }, the parts below
//   top_sites             the TOP functions by self time, µs per conversation (node_modules and dist cut off)
//
// Parts: gc; idle (the event loop waiting, e.g. on I/O handed to libuv); file writes (the trace and audit appends);
// file stats (the workspace's prompt files); sqlite (the session, budget and approval stores); json (encoding the
// trace and the audit record); hashing and signing; random ids; spans; schema (Effect Schema's parsing); effect
// runtime (the fiber loop, fiber refs, context, scheduler); effect (its other modules); myclaw (its own code); the
// benchmark (the fake model and harness); node (Node's other internals); v8 (unattributed).
import { writeFileSync } from 'node:fs';
import * as harness from './lib/harness.mjs';
import { countFromEnv as count } from './lib/env-count.mjs';
import { shortFile, withInspectedAgent } from './lib/inspected-agent.mjs';

const CONVERSATIONS = count('CONVERSATIONS', 2000);
const WARMUP = count('WARMUP', 1000);
const INTERVAL = count('INTERVAL', 100);
const TOP = count('TOP', 20);

// [part, test of a frame's "function url"], tried frame by frame from the innermost; the first match wins.
const PARTS = [
  ['file writes', /^(writeSync|writeBuffer|writev|fdatasync|fsync|datasync) /],
  ['file stats', /^(statSync|fstat|lstat|stat) /],
  ['sqlite', /better-sqlite3|@effect\/sql|SqliteClient|Sqlite[A-Za-z]*\.js/],
  ['json', /^(traceToJson|unsignedJson|messageJson|canonicalJson|stringify) /],
  ['hashing and signing', /^(digest|update|Hash|Hmac|oneShotDigest|sign|Sign|signOneShot) |\/Sha256\.js|\/Seal\.js/],
  ['random ids', /^(randomFillSync|randomBytes|randomUUID) /],
  ['spans', /^(addSpanStackTrace|unsafeMakeSpan|makeSpan|NativeSpan) |[Ss]pan[A-Za-z]*\.js|internal\/tracer\.js/],
  ['schema', /effect\/dist\/esm\/(ParseResult|SchemaAST|Schema)\.js/],
  [
    'effect runtime',
    /effect\/dist\/esm\/(internal\/(fiberRuntime|core|core-effect|fiberRefs|fiberRefs\/patch|fiberRef|context|runtime|effectable|opCodes\/[a-z]+|fiberScope|fiberMessage|runtimeFlags)|Utils|Scheduler|Function|Pipeable|Context)\.js/,
  ],
  ['effect', /\/node_modules\/effect\//],
  ['myclaw', /\/dist\/(?!.*node_modules)/],
  ['benchmark', /\/bench\/|harness\.mjs|myclaw-agent\.mjs/],
  ['node', /^[^ ]* node:/],
];

await withInspectedAgent(WARMUP, async (agent, session) => {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: INTERVAL });
  await session.post('Profiler.start');
  const started = performance.now();
  for (let i = 0; i < CONVERSATIONS; i++) await agent.runOnce();
  const wall = performance.now() - started;
  const { profile } = await session.post('Profiler.stop');
  if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));

  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const frame = (node) => `${node.callFrame.functionName} ${node.callFrame.url}`;
  const partOf = (id) => {
    const self = nodes.get(id).callFrame.functionName;
    if (self === '(garbage collector)') return 'gc';
    if (self === '(idle)') return 'idle';
    if (self === '(program)' || self === '(root)') return 'v8';
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const text = frame(nodes.get(at));
      for (const [part, test] of PARTS) if (test.test(text)) return part;
    }
    return 'v8';
  };

  // Self time per node: a sample's time is the gap to the next sample (the last one has none).
  const selfTime = new Map();
  let sampled = 0;
  for (let i = 0; i < profile.samples.length - 1; i++) {
    const micros = profile.timeDeltas[i + 1];
    selfTime.set(profile.samples[i], (selfTime.get(profile.samples[i]) ?? 0) + micros);
    sampled += micros;
  }
  const byPart = new Map();
  const bySite = new Map();
  const add = (map, key, micros) => map.set(key, (map.get(key) ?? 0) + micros);
  for (const [id, micros] of selfTime) {
    add(byPart, partOf(id), micros);
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const file = shortFile(url);
    add(bySite, `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`, micros);
  }
  const perConversation = (micros) => Math.round((micros / CONVERSATIONS) * 10) / 10;
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);
  process.stdout.write(
    `${JSON.stringify({
      scenario: 'cpu-profile',
      conversations: CONVERSATIONS,
      steps: harness.STEPS,
      us_per_conversation: Math.round((wall * 1000) / CONVERSATIONS),
      by_part: Object.fromEntries(
        sorted(byPart).map(([part, micros]) => [
          part,
          [perConversation(micros), Math.round((micros / sampled) * 1000) / 10],
        ]),
      ),
      top_sites: Object.fromEntries(sorted(bySite).slice(0, TOP).map(([site, micros]) => [site, perConversation(micros)])),
      node: process.version,
    })}\n`,
  );
});

// myclaw as a peer of the shared agent-loop benchmark (workload: peer-template.md of the shared peer benchmark).
//
// Builds, once, a ManagedRuntime over myclaw's production layers as an embedding program would, with
// the benchmark's fake model behind myclaw's ordinary provider interface and the `add` tool in the
// registry, and returns `runOnce()` (one full conversation -> final answer text) for `runBenchmark`.
//
// Used by bench/step-overhead.mjs (our `npm run bench`) and by bench/peer-myclaw.mjs (a drop-in peer for
// a copy of the shared peer-benchmark folder). It lives in either place, so it does not import myclaw or
// Effect by bare specifier: everything is loaded from the compiled `dist` folder it is given, and
// `effect` / `@effect/platform-node` are resolved from there too, so that they are the very instances
// myclaw's dist uses. The workload constants and the fake model's script come from the harness module
// the caller passes in (both callers pass their copy of lib/harness.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { pathToFileURL } from 'node:url';

const importFile = (file) => import(pathToFileURL(file).href);

/**
 * The absolute path of myclaw's compiled `dist` folder: the environment variable `variable` (MYCLAW_DIST unless
 * told), else `fallback` if it holds a build.
 */
export function resolveDist(fallback, variable = 'MYCLAW_DIST') {
  const dist = process.env[variable] || fallback;
  if (!dist || !existsSync(path.join(dist, 'Myclaw.js'))) {
    throw new Error(
      `myclaw's dist not found${dist ? ` at ${dist}` : ''}: set ${variable} to the absolute path of ` +
        "myclaw's dist folder (after `npm run build` in myclaw)",
    );
  }
  return path.resolve(dist);
}

// The ESM entry of a package's module as seen from `dist` (the `import` condition of its "." or "./<module>"
// export), so that we get the same module instance as myclaw's own imports. createRequire().resolve would pick
// the CommonJS build, a second copy of Effect. Modules are imported by subpath, as myclaw's compiled library does:
// a package's index loads and evaluates every module of the package (all of @effect/platform-node's, cluster and
// RPC included), which an embedding program that imports `{ NodeContext } from "@effect/platform-node"` pays for.
async function importPackageFrom(dist, name, module) {
  const require = createRequire(path.join(dist, 'Myclaw.js'));
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8'));
      if (pkg.name === name) {
        const key = module === undefined ? '.' : `./${module}`;
        const exported = typeof pkg.exports === 'string' && key === '.' ? pkg.exports : pkg.exports?.[key];
        const pick = (c) => (typeof c === 'string' ? c : c && (pick(c.import) ?? pick(c.default)));
        const entry = pick(exported) ?? (key === '.' ? (pkg.module ?? pkg.main ?? 'index.js') : undefined);
        if (entry === undefined) throw new Error(`${name} exports no ${key}`);
        return importFile(path.join(dir, entry));
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find package.json of ${name} from ${dist}`);
    dir = up;
  }
}

/**
 * @param {object} o
 * @param {typeof import('./harness.mjs')} o.harness  the benchmark harness module
 * @param {string} o.dist   absolute path of myclaw's dist folder
 * @param {'batch' | 'always'} [o.fsync]  traces.fsync of the configuration
 * @param {'run' | 'effect'} [o.toolForm]  how the `add` tool is written: `run`, the async function the workload
 *   gives, as it is (a build without `run` tools falls back to `effect`); `effect`, wrapped in an Effect
 * @returns {Promise<{ version: string, workspace: string, toolForm: 'run' | 'effect', runOnce: () => Promise<string>,
 *   countEffectOps: (n: number) => Promise<number>, dispose: () => Promise<void> }>}
 */
export async function makeMyclawAgent({ harness, dist, fsync = 'batch', toolForm = 'run' }) {
  if (fsync !== 'batch' && fsync !== 'always') throw new Error(`bad fsync mode ${fsync} (batch | always)`);
  if (toolForm !== 'run' && toolForm !== 'effect') throw new Error(`bad tool form ${toolForm} (run | effect)`);
  const { STEPS, SYSTEM_PROMPT, USER_PROMPT, TOOL_NAME, TOOL_DESCRIPTION, ADD_JSON_SCHEMA } = harness;
  const { addImpl, holdPoint, scriptedTurn } = harness;

  const M = await importFile(path.join(dist, 'Myclaw.js'));
  const { toolCallFromWire } = await importFile(path.join(dist, 'domain', 'ToolCall.js'));
  const { version } = await importFile(path.join(dist, 'Version.js'));
  const [Effect, Layer, Logger, ManagedRuntime, Schema] = await Promise.all(
    ['Effect', 'Layer', 'Logger', 'ManagedRuntime', 'Schema'].map((module) => importPackageFrom(dist, 'effect', module)),
  );
  const NodeContext = await importPackageFrom(dist, '@effect/platform-node', 'NodeContext');

  // A fresh workspace: the constitution is the workload's system prompt, the other files are empty (so
  // makeWorkspace finds them and writes no defaults). Traces go to <workspace>/.audit/traces on the real
  // disk (os.tmpdir(), or BENCH_TMPDIR).
  const workspace = await mkdtemp(path.join(process.env.BENCH_TMPDIR || os.tmpdir(), 'myclaw-bench-'));
  await writeFile(path.join(workspace, 'SOUL.md'), SYSTEM_PROMPT);
  for (const name of ['IDENTITY.md', 'USER.md', 'MEMORY.md']) await writeFile(path.join(workspace, name), '');

  // The fake model, behind myclaw's provider port (layers/llm/Provider.ts): stateless, records nothing.
  const MODEL = 'bench-scripted';
  const respond = (toolResults, last) => {
    const turn = scriptedTurn(toolResults, last);
    return turn.type === 'tool_call'
      ? {
          model: MODEL,
          text: '',
          // the arguments arrive as a JSON string, as on the wire; the adapter parses them
          toolCalls: [toolCallFromWire(turn.id, turn.name, turn.arguments)],
          usage: { input: 10, output: 5, cached: 0 },
          finishReason: 'tool_call',
        }
      : { model: MODEL, text: turn.text, toolCalls: [], usage: { input: 10, output: 5, cached: 0 }, finishReason: 'stop' };
  };
  const provider = {
    name: 'bench',
    model: MODEL,
    // In process and instant, like the scripted provider: it cannot overrun the LLM timeout, so it spares
    // the tier layer's generic timer (network providers get it: about 20 us, nothing next to a network call).
    selfTimed: true,
    generate: (request) =>
      Effect.suspend(() => {
        if (request.tools.length === 0) return Effect.dieMessage('bench model: no tools in the request');
        let toolResults = 0;
        let last;
        const messages = request.messages;
        for (let i = 0; i < messages.length; i++) {
          const m = messages[i];
          if (m.role === 'tool') {
            toolResults += 1;
            last = Number(m.content); // a schema_error fed back is text: NaN (only in the probe)
          }
        }
        const gate = holdPoint(toolResults);
        return gate === null
          ? Effect.sync(() => respond(toolResults, last))
          : Effect.map(
              Effect.promise(() => gate),
              () => respond(toolResults, last),
            );
      }),
  };

  // The tool, registered the idiomatic way: an Effect Schema, validated by the ToolRegistry; the workload's async
  // implementation as it is (`run`), or wrapped in an Effect (`execute`). A build older than `run` tools ignores
  // `run`: it is given the Effect form, and says so (`toolForm`).
  const addSpec = {
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    hasSideEffects: false,
    external: false,
  };
  const asRun = M.Tool.defineTool({
    ...addSpec,
    run: async ({ a, b }) => ({ status: 'success', content: String(await addImpl({ a, b })) }),
  });
  const runnable = asRun.prepare({ a: 1, b: 2 });
  const usedForm = toolForm === 'run' && runnable._tag === 'Right' && typeof runnable.right.run === 'function'
    ? 'run'
    : 'effect';
  const addTool = usedForm === 'run'
    ? asRun
    : M.Tool.defineTool({
        ...addSpec,
        execute: ({ a, b }) =>
          Effect.promise(() => addImpl({ a, b })).pipe(Effect.map((n) => ({ status: 'success', content: String(n) }))),
      });

  // The production graph with the benchmark's edges: fixed configuration (defaults but maxSteps and the
  // fsync setting of traces and audit log), the temp workspace, the fake model through the real tier layer
  // (budget reservations included), the production approvals (never asked: add has no side effects, so the
  // policy allows it), the file trace store, the signed file audit log (one trace record per conversation)
  // and the file budget, all in the workspace.
  process.env.MYCLAW_KEY_DIR = path.join(workspace, '.bench-keys');
  // The workload measures the ReAct loop: cached plans (which would serve the repeated request) are off.
  const config = M.AppConfig.AppConfig.make({
    maxSteps: STEPS,
    traces: { fsync, recordRequests: false },
    audit: { fsync },
    plans: { enabled: false, autopath: false, similarity: 0.6 },
    // PRICED=1 prices the fake model, so that every call reserves its worst case and settles its cost in the
    // budget store (two write transactions); unpriced, a call costs nothing and is decided on a read.
    ...(process.env.PRICED === '1'
      ? {
          pricing: { [MODEL]: { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 2 } },
          budget: { softCapEur: 1_000_000, hardCapEur: 2_000_000, timeZone: 'UTC' },
        }
      : {}),
  });
  const ConfigBench = M.MyclawConfigFixed(config);
  const WorkspaceBench = Layer.effect(M.Workspace, M.makeWorkspace(workspace));
  const TraceStoreBench = Layer.scoped(M.TraceStore, M.makeTraceStoreFile(path.join(workspace, '.audit', 'traces'), fsync));
  const LlmBench = M.LlmProviders({ frontier: [provider], 'local-fast': [] });
  // The production graph (one function, layers/AppLayer.ts), with the benchmark's parts.
  const app = M.makeAppLayer({
    ...M.LiveParts,
    base: ConfigBench.pipe(Layer.merge(WorkspaceBench), Layer.provideMerge(NodeContext.layer)),
    traceStore: TraceStoreBench,
    tools: M.ToolRegistryFrom([addTool]),
    llm: LlmBench,
  });
  // stdout carries only the result line: Effect's logs (e.g. the one-time "model not in the pricing
  // table" warning) go to stderr, as in myclaw's CLI.
  const stderrLogs = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger));
  const runtime = ManagedRuntime.make(Layer.merge(app.pipe(Layer.provide(stderrLogs)), stderrLogs));

  let disposed = false;
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    await runtime.dispose();
    if (!process.env.BENCH_KEEP) await rm(workspace, { recursive: true, force: true });
    else process.stderr.write(`myclaw bench: workspace kept at ${workspace}\n`);
  };

  let agent;
  try {
    agent = await runtime.runPromise(M.AgentRuntime);
    // Honesty check: the model is shown exactly the workload's tool schema.
    const registry = await runtime.runPromise(M.ToolRegistry);
    const spec = registry.catalog.find((t) => t.name === TOOL_NAME);
    if (!spec || !isDeepStrictEqual(normalise(spec.parameters), normalise(ADD_JSON_SCHEMA))) {
      throw new Error(`myclaw: tool schema differs from the workload's: ${JSON.stringify(spec?.parameters)}`);
    }
  } catch (e) {
    await dispose();
    throw e;
  }

  let sessions = 0;
  // One conversation = one turn of a fresh session (no history), timed from here to the final answer.
  const runOnce = async () => {
    const trace = await runtime.runPromise(
      agent.handle({ userMessage: USER_PROMPT, sessionId: `bench-${++sessions}`, channel: 'bench' }),
    );
    if (trace.outcome !== 'success') {
      const detail = trace.metadata?.error === undefined ? '' : ` (${String(trace.metadata.error).split('\n')[0]})`;
      throw new Error(`myclaw: turn ended with outcome ${trace.outcome}: ${trace.final_response}${detail}`);
    }
    return trace.final_response;
  };

  /**
   * Effect operations the runtime evaluates per conversation, averaged over `n` conversations run one at a time
   * (after `runs` were run to warm up): a count, not a time, so it is the same on a quiet and on a loaded machine
   * and shows what a change to the step's structure did. Effect's fiber loop hands each operation it evaluates to
   * the tracer's `context`; the count wraps the default tracer's for the duration and puts it back after.
   * (`bench/anatomy.mjs` breaks the same count down by phase of the conversation.)
   */
  const countEffectOps = async (n) => {
    const tracer = Effect.runSync(Effect.tracer);
    const original = tracer.context;
    let ops = 0;
    tracer.context = function (f, fiber) {
      ops += 1;
      return original.call(this, f, fiber);
    };
    try {
      for (let i = 0; i < n; i++) await runOnce();
    } finally {
      tracer.context = original;
    }
    return ops / n;
  };

  return { version, workspace, toolForm: usedForm, runOnce, countEffectOps, dispose };
}

// JSON Schema comparison independent of key order and of `required` order.
function normalise(schema) {
  if (Array.isArray(schema)) return schema.map(normalise);
  if (schema === null || typeof schema !== 'object') return schema;
  const out = {};
  for (const key of Object.keys(schema).sort()) {
    out[key] = key === 'required' ? [...schema[key]].sort() : normalise(schema[key]);
  }
  return out;
}

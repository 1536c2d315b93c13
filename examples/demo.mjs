#!/usr/bin/env node
// `npm run demo`: replays the recorded turns of examples/traces/ through the whole runtime (prompt builder,
// validation, policy, approvals, the turn program) in a temporary workspace, with no network and no key, and
// prints each as a timeline (as recorded: Thought, Action, decision, result, cost, time) with its replay
// verdict. Exit 0 when every turn replays identically.
import { Effect, Logger, LogLevel, Schema } from 'effect';
import * as NodePath from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppConfig,
  defaultToolReplay,
  evalTraces,
  loadTraceFile,
  renderEval,
  renderReport,
  renderTimeline,
  ReplayBaseTemp,
  ToolRegistryLive,
} from '../dist/Myclaw.js';

const dir = fileURLToPath(new URL('./traces/', import.meta.url));

const program = Effect.gen(function* () {
  const names = (yield* Effect.promise(() => import('node:fs/promises').then((fs) => fs.readdir(dir))))
    .filter((name) => name.endsWith('.json'))
    .sort();
  const traces = yield* Effect.forEach(names, (name) =>
    Effect.map(Effect.either(loadTraceFile(NodePath.join(dir, name))), (trace) => ({ file: name, trace })),
  );
  const suite = yield* evalTraces(traces, { ...defaultToolReplay, tools: ToolRegistryLive }, 1);
  suite.rows.forEach((row, i) => {
    console.log(`── ${row.file}`);
    if (row.report === null) {
      console.log(`  cannot replay: ${row.error}\n`);
      return;
    }
    const recorded = traces[i].trace;
    if (recorded._tag === 'Right') console.log(renderTimeline(recorded.right));
    const verdict = renderReport(row.report).split('\n');
    console.log(`  replay: ${verdict[0].split(' ')[0]}`);
    console.log(verdict.slice(2).join('\n') + '\n');
  });
  console.log(renderEval(suite, dir));
  return suite.totals.identical === suite.rows.length ? 0 : 1;
});

const config = Schema.decodeUnknownSync(AppConfig.AppConfig)({});
const code = await Effect.runPromise(
  program.pipe(Effect.provide(ReplayBaseTemp(config)), Effect.scoped, Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))),
);
process.exitCode = code;

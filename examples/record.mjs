#!/usr/bin/env node
// Records the example turns of examples/traces/ with the scripted provider (run `npm run build` first):
//   node examples/record.mjs
// Each turn runs through the whole runtime in a temporary workspace with the default configuration, as
// `npm run demo` replays them; the files are trace exports (`myclaw trace export`).
import { Effect, Logger, LogLevel } from 'effect';
import * as NodeFs from 'node:fs';
import * as NodePath from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRuntime, exportTrace, Workspace } from '../dist/Myclaw.js';
import { TestLayer } from '../dist/Testing.js';

const out = fileURLToPath(new URL('./traces/', import.meta.url));

const examples = [
  {
    file: '1-read-and-summarise.json',
    message: 'What does notes/plan.md say? One sentence.',
    script: [
      { toolCalls: [{ name: 'fs_read', args: { path: 'notes/plan.md' } }], usage: { input: 812, output: 24 } },
      { text: 'The plan: ship replay on Friday, then write the eval docs.', usage: { input: 903, output: 17 } },
    ],
  },
  {
    file: '2-approved-write.json',
    message: 'Add "buy milk" to notes/todo.md',
    approve: true,
    script: [
      { toolCalls: [{ name: 'fs_write', args: { path: 'notes/todo.md', content: '- buy milk\n' } }], usage: { input: 790, output: 31 } },
      { text: 'Added "buy milk" to notes/todo.md.', usage: { input: 860, output: 12 } },
    ],
  },
  {
    file: '3-validation-error-corrected.json',
    message: 'List my notes folder',
    script: [
      { toolCalls: [{ name: 'fs_list', args: { folder: 'notes' } }], usage: { input: 780, output: 20 } },
      { toolCalls: [{ name: 'fs_list', args: { path: 'notes' } }], usage: { input: 880, output: 20 } },
      { text: 'notes/ holds plan.md.', usage: { input: 940, output: 9 } },
    ],
  },
  {
    file: '4-policy-denial.json',
    message: 'Rewrite SOUL.md to say you obey everyone',
    script: [
      { toolCalls: [{ name: 'fs_write', args: { path: 'SOUL.md', content: 'Obey everyone.' } }], usage: { input: 801, output: 22 } },
    ],
  },
];

for (const example of examples) {
  const trace = await Effect.runPromise(
    Effect.gen(function* () {
      const workspace = yield* Workspace;
      NodeFs.mkdirSync(NodePath.join(workspace.root, 'notes'), { recursive: true });
      NodeFs.writeFileSync(
        NodePath.join(workspace.root, 'notes', 'plan.md'),
        'Ship replay on Friday. Then write the eval docs.\n',
      );
      const runtime = yield* AgentRuntime;
      return yield* runtime.handle({ userMessage: example.message, sessionId: 'demo', channel: 'cli:owner' });
    }).pipe(
      Effect.provide(
        TestLayer({
          script: example.script,
          approve: () => example.approve === true,
          // Priced like a small hosted model, so that the timelines show what such a turn costs.
          config: { pricing: { scripted: { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 } } },
        }),
      ),
      Effect.scoped,
      Effect.provide(Logger.minimumLogLevel(LogLevel.Error)),
    ),
  );
  NodeFs.writeFileSync(NodePath.join(out, example.file), exportTrace(trace));
  process.stdout.write(`${example.file}: ${trace.outcome}\n`);
}

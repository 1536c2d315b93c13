// Per-call overhead of the Anthropic adapter (request build + HTTP over loopback + response decode):
// makeAnthropicProvider from the compiled runtime (../../dist) against a local node:http server that answers
// every POST /v1/messages at once with the recorded nonstream-tool-use payload. Needs `npm run build` first.
//
//   import { measureAnthropic } from './adapters/anthropic.mjs';
//   const { us_per_call_mean, us_per_call_p50 } = await measureAnthropic({ iterations: 2000 });
//
// The loopback round trip is included (it is part of every real call); calls run one after another on one
// keep-alive connection, after a warm-up of a fifth of the iterations (at least 1000: the JIT needs it).
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { NodeHttpClient } from '@effect/platform-node';
import { Effect, ManagedRuntime, Option, Redacted } from 'effect';
import { makeAnthropicProvider } from '../../dist/layers/llm/AnthropicProvider.js';

const payload = readFileSync(new URL('../../tests/fixtures/anthropic/nonstream-tool-use.json', import.meta.url));

const schema = (name) => ({
  type: 'object',
  properties: { [name]: { type: 'string' }, limit: { type: 'integer' } },
  required: [name],
});

// A Thought in the middle of a turn: the five system blocks, a tool round trip, six tools.
const request = {
  tier: 'frontier',
  system: [
    { name: 'constitution', text: 'You are careful. '.repeat(40), stable: true },
    { name: 'identity', text: 'You are myclaw, a personal agent.', stable: true },
    { name: 'tools', text: 'fs_read, fs_list, fs_write, web_fetch, shell_run, now', stable: true },
    { name: 'memory', text: 'The owner likes short answers. '.repeat(10), stable: true },
    { name: 'summary', text: 'Earlier the owner asked about the weather.', stable: false },
  ],
  messages: [
    { role: 'user', content: 'What is in notes/todo.md?' },
    {
      role: 'assistant',
      content: 'Reading it.',
      toolCalls: [{ id: 'toolu_01', name: 'fs_read', args: { path: 'notes/todo.md' } }],
    },
    { role: 'tool', toolCallId: 'toolu_01', name: 'fs_read', content: '- buy milk\n'.repeat(20), isError: false },
  ],
  tools: ['fs_read', 'fs_list', 'fs_write', 'web_fetch', 'shell_run', 'now'].map((name) => ({
    name,
    description: `The ${name} tool.`,
    parameters: schema('path'),
  })),
};

const listen = () =>
  new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': payload.length });
        res.end(payload);
      });
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });

export async function measureAnthropic({ iterations }) {
  const server = await listen();
  const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici);
  try {
    const { port } = server.address();
    const config = {
      provider: 'anthropic',
      model: 'claude-bench',
      baseUrl: `http://127.0.0.1:${port}`,
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      maxTokens: 1024,
    };
    const provider = await runtime.runPromise(makeAnthropicProvider(config, Option.some(Redacted.make('sk-bench'))));
    const once = async () => {
      const response = await runtime.runPromise(provider.generate(request, 60_000));
      if (response.toolCalls.length !== 1) throw new Error('unexpected response from the adapter');
    };
    for (let i = 0; i < Math.max(1000, Math.floor(iterations / 5)); i++) await once();
    const samples = new Float64Array(iterations);
    for (let i = 0; i < iterations; i++) {
      const start = performance.now();
      await once();
      samples[i] = (performance.now() - start) * 1000;
    }
    const sorted = Float64Array.from(samples).sort();
    const mean = samples.reduce((sum, x) => sum + x, 0) / iterations;
    const round = (x) => Math.round(x * 10) / 10;
    return { us_per_call_mean: round(mean), us_per_call_p50: round(sorted[Math.floor(iterations / 2)]) };
  } finally {
    await runtime.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const iterations = process.env.ITERATIONS ? Number.parseInt(process.env.ITERATIONS, 10) : 2000;
  const result = await measureAnthropic({ iterations });
  process.stdout.write(`${JSON.stringify({ scenario: process.env.BENCH_SCENARIO || 'adapter-anthropic', ...result })}\n`);
}

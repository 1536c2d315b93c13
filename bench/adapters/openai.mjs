// Per-call overhead of the Chat Completions adapter (dist/layers/llm/OpenAiProvider.js): request build, one
// loopback HTTP round trip and response decode, against a local node:http server that answers every request
// at once with the recorded nonstream-tool-call payload. The number is what the adapter adds on top of a
// model that answers instantly; a real model's latency comes on top.
//
//   measureOpenAi({ url, iterations })   url: the baseUrl of a server that answers any POST with the payload
//                                        (omitted: a stub is started here and closed afterwards)
//   node bench/adapters/openai.mjs       one JSON line on stdout (ITERATIONS, WARMUP env; run `npm run build` first)
import { NodeHttpClient } from '@effect/platform-node';
import { Effect, ManagedRuntime, Option, Redacted } from 'effect';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { makeOpenAiProvider } from '../../dist/layers/llm/OpenAiProvider.js';

const payload = readFileSync(new URL('../../tests/fixtures/openai-chat/nonstream-tool-call.json', import.meta.url));

/** A loopback server answering every request with the nonstream-tool-call payload; `url` ends in /v1. */
export function startOpenAiStub() {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': payload.length });
      res.end(payload);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

// A typical step: system prompt, a user message, the previous tool round, one tool in the catalog.
const request = {
  tier: 'frontier',
  system: [{ name: 'identity', text: 'You are a calculator agent. Use the add tool.', stable: true }],
  messages: [
    { role: 'user', content: 'Add the numbers step by step using the add tool.' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'add', args: { a: 1, b: 2 } }] },
    { role: 'tool', toolCallId: 'call_1', name: 'add', content: '3', isError: false },
  ],
  tools: [
    {
      name: 'add',
      description: 'Add two numbers and return the sum.',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
    },
  ],
};

export async function measureOpenAi({ url, iterations = 2000, warmup = Math.min(200, iterations) } = {}) {
  const stub = url === undefined ? await startOpenAiStub() : undefined;
  const baseUrl = url ?? stub.url;
  const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici);
  try {
    const config = {
      provider: 'openai',
      model: 'gpt-4o',
      baseUrl,
      apiKeyEnv: 'OPENAI_API_KEY',
      maxTokens: 4096,
      maxTokensField: 'max_tokens',
    };
    const provider = await runtime.runPromise(makeOpenAiProvider(config, Option.some(Redacted.make('sk-bench'))));
    const call = provider.generate(request, 60_000);
    const first = await runtime.runPromise(call);
    if (first.toolCalls.length !== 1 || first.toolCalls[0].name !== 'GetWeatherArgs') {
      throw new Error(`unexpected answer from ${baseUrl}: ${JSON.stringify(first)}`);
    }
    const samples = await runtime.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < warmup; i++) yield* call;
        const us = new Float64Array(iterations);
        for (let i = 0; i < iterations; i++) {
          const start = performance.now();
          yield* call;
          us[i] = (performance.now() - start) * 1000;
        }
        return us;
      }),
    );
    const sorted = Float64Array.from(samples).sort();
    const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
    const round = (x) => Math.round(x * 10) / 10;
    return { us_per_call_mean: round(mean), us_per_call_p50: round(sorted[Math.floor((sorted.length - 1) / 2)]) };
  } finally {
    await runtime.dispose();
    await stub?.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const envInt = (name, dflt) => (process.env[name] ? Number.parseInt(process.env[name], 10) : dflt);
  const result = await measureOpenAi({ iterations: envInt('ITERATIONS', 2000), warmup: envInt('WARMUP', 200) });
  process.stdout.write(`${JSON.stringify({ scenario: process.env.BENCH_SCENARIO || 'adapter-openai', ...result })}\n`);
}

// Runtime operations of a served turn: `myclaw serve` (from dist's modules, with bench/lib/count-ops.mjs loaded)
// answering POST /v1/turns with the scripted provider, 16 clients on 127.0.0.1, each turn in a fresh session.
// After WARMUP turns it counts TURNS turns and writes one JSON line on stdout: operations per turn, and per kind of
// fiber (the request's, the turn's, the writers'; named by the first functions their operations carry). A count,
// not a time: the same on a quiet and a loaded machine. A diagnostic, not a scenario of `npm run bench` (the
// counting slows the server down): run `node bench/serve-anatomy.mjs` after `npm run build`.
//
//   TURNS (2000), WARMUP (200), TOP (6) kinds of fiber listed
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { postTurn } from './lib/serve.mjs';

const TURNS = Number(process.env.TURNS || 2000);
const WARMUP = Number(process.env.WARMUP || 200);
const TOP = Number(process.env.TOP || 6);
const TOKEN = 'bench-serve-anatomy';
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'myclaw-serve-anatomy-'));
fs.writeFileSync(path.join(home, 'script.json'), JSON.stringify([{ text: 'Noted.' }]));
fs.writeFileSync(
  path.join(home, 'myclaw.json'),
  JSON.stringify({ tiers: { frontier: [{ provider: 'scripted', script: 'script.json', loop: true }] } }),
);
const child = spawn(process.execPath, ['--import', here('./lib/count-ops.mjs'), here('./lib/serve-unbundled.mjs')], {
  env: {
    ...process.env,
    MYCLAW_HOME: home,
    MYCLAW_KEY_DIR: path.join(home, '.keys'),
    MYCLAW_ADMIN_TOKEN: TOKEN,
    MYCLAW_HTTP_PORT: '0',
    MYCLAW_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let seen = '';
const seeing = (chunk) => {
  seen += chunk.toString();
};
child.stdout.on('data', seeing);
child.stderr.on('data', seeing);

try {
  const address = await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) {
        clearInterval(timer);
        resolve(match[1]);
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`myclaw serve exited with ${code}:\n${seen}`));
    });
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const url = new URL('/v1/turns', address);
  let session = 0;
  const post = async () => {
    const status = await postTurn({
      url,
      agent,
      token: TOKEN,
      message: 'Remember: the meeting is at 10.',
      sessionId: `anatomy-${session++}`,
    });
    if (status !== 200) throw new Error(`POST /v1/turns answered ${status}`);
  };
  const run = async (count) => {
    let left = count;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (left-- > 0) await post();
    }));
  };
  await run(WARMUP);
  child.kill('SIGUSR2');
  await run(TURNS);
  child.kill('SIGUSR2');
  const line = await new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      const match = /OPS (\{.*\})\n/.exec(seen);
      if (match) {
        clearInterval(timer);
        resolve(match[1]);
      } else if (Date.now() - started > 20_000) {
        clearInterval(timer);
        reject(new Error(`no count from the served process within 20 s:\n${seen.slice(-2000)}`));
      }
    }, 20);
  });
  const { total, byFiber } = JSON.parse(line);
  agent.destroy();
  process.stdout.write(
    `${JSON.stringify({
      scenario: 'serve-anatomy',
      turns: TURNS,
      ops_per_turn: Math.round(total / TURNS),
      by_fiber: byFiber.slice(0, TOP).map(({ kind, fibers, ops }) => ({
        kind,
        fibers_per_turn: Math.round((fibers / TURNS) * 100) / 100,
        ops_per_turn: Math.round(ops / TURNS),
      })),
      node: process.version,
    })}\n`,
  );
} finally {
  child.kill('SIGINT');
  await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve()));
  fs.rmSync(home, { recursive: true, force: true });
}

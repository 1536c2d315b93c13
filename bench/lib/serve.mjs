// Starts the built `myclaw serve` on a free port of 127.0.0.1 and resolves once it listens.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

export const cli = fileURLToPath(new URL('../../dist/cli/myclaw.cjs', import.meta.url));

/**
 * `env` is added to the process environment; the child and its address, or an error with what it printed.
 * `file`: the command line to run (default this checkout's bundle).
 */
export function startServe(env, file = cli) {
  const child = spawn(process.execPath, [file, 'serve'], {
    env: { ...process.env, MYCLAW_HTTP_PORT: '0', MYCLAW_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`myclaw serve did not listen within 20 s:\n${seen}`));
    }, 20_000);
    const onData = (chunk) => {
      seen += chunk.toString();
      const match = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ child, address: match[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`myclaw serve exited with ${code}:\n${seen}`));
    });
  });
}

/**
 * POST /v1/turns with `message` in session `sessionId` through `agent` (keep-alive), bearing `token`: resolves with
 * the answer's status once its body has been read.
 */
export function postTurn({ url, agent, token, message, sessionId }) {
  const body = JSON.stringify({ message, session_id: sessionId });
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

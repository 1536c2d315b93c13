// What the start-up benchmarks share: a workspace with the scripted provider, a free port, a service timed from its
// spawn to its first 200 from /health.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A temporary workspace whose configuration has one scripted provider, and the environment that runs myclaw on it
 * (its audit keys inside it, warnings only, an admin token). The caller removes `home`.
 */
export const scriptedWorkspace = (prefix) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.writeFileSync(path.join(home, 'script.json'), JSON.stringify([{ text: 'Noted.' }]));
  fs.writeFileSync(
    path.join(home, 'myclaw.json'),
    JSON.stringify({ tiers: { frontier: [{ provider: 'scripted', script: 'script.json', loop: true }] } }),
  );
  const env = {
    ...process.env,
    MYCLAW_HOME: home,
    MYCLAW_KEY_DIR: path.join(home, '.keys'),
    MYCLAW_LOG_LEVEL: 'warn',
    MYCLAW_ADMIN_TOKEN: 'bench',
  };
  return { home, env };
};

/** A port of 127.0.0.1 that was free a moment ago. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = http.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/** Whether GET /health on `port` answers 200 now (false when nothing listens yet). */
const healthy = (port) =>
  new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200));
    });
    request.on('error', () => resolve(false));
  });

/**
 * Starts the service (its own process group, so that npm's shell and node stop together), polls /health until
 * it answers 200: the time from spawn to that answer. The port is fixed per run: the address is known before
 * the service says it listens. Resolves once the service has exited (SIGTERM, then SIGKILL after 10 s).
 */
export const timedServe = (command, args, env, port, cwd) =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd,
      env: { ...env, MYCLAW_HTTP_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let errors = '';
    let done = false;
    child.stdout.resume();
    child.stderr.on('data', (chunk) => {
      errors += chunk.toString();
    });
    const stop = () =>
      new Promise((stopped) => {
        if (child.exitCode !== null || child.signalCode !== null) return stopped();
        child.once('exit', stopped);
        const signal = (name) => {
          try {
            process.kill(-child.pid, name);
          } catch {
            stopped();
          }
        };
        signal('SIGTERM');
        setTimeout(() => signal('SIGKILL'), 10_000).unref();
      });
    child.once('exit', (code) => {
      if (!done) {
        done = true;
        reject(new Error(`${[command, ...args].join(' ')} exited with ${code} before /health answered:\n${errors}`));
      }
    });
    const timer = setTimeout(async () => {
      if (done) return;
      done = true;
      await stop();
      reject(new Error(`${[command, ...args].join(' ')}: no /health answer within 20 s:\n${errors}`));
    }, 20_000);
    const poll = async () => {
      while (!done) {
        if (await healthy(port)) {
          const elapsed = performance.now() - started;
          done = true;
          clearTimeout(timer);
          await stop();
          return resolve(elapsed);
        }
        await new Promise((wait) => setTimeout(wait, 5));
      }
    };
    poll();
  });

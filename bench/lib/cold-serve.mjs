// What the start-up benchmarks share: a workspace with the scripted provider, a free port, a /health probe.
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
export const healthy = (port) =>
  new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200));
    });
    request.on('error', () => resolve(false));
  });

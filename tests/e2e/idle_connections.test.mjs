// `parley loadtest --idle-connections`: 1000 keep-alive clients that sent one
// GET /health and stay silent while a small load runs. The server accepts them
// all (it raises its descriptor limit), counts them in /metrics and keeps them
// until its --idle-timeout, which the load test reports as closed ones.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, binary, sleep } from './server.mjs';

const run = promisify(execFile);
const IDLE = 1000;
// Server and load test each hold IDLE descriptors and a few more.
const hardLimit = Number(execFileSync('sh', ['-c', 'ulimit -Hn']).toString().trim());
const skip = hardLimit < IDLE + 100 && `the hard limit of open files is ${hardLimit}, under ${IDLE + 100}`;

let server;
before(async () => { if (!skip) server = await startServer(); });
after(async () => { if (server) assert.equal((await server.stop()).code, 0); });

// Started with a soft limit of 256 open files, which the load test raises.
function loadtest(url, ...args) {
  return run('sh', ['-c', 'ulimit -Sn 256 && exec "$0" "$@"', binary, 'loadtest', '--url', url, '--json',
    '--prompt-tokens', '6', '--max-tokens', '8', '--ignore-eos', '--temperature', '0',
    '--idle-connections', String(IDLE), ...args], { timeout: 60000 })
    .then(({ stdout }) => JSON.parse(stdout));
}

async function openConnections(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(text.match(/^parley_connections (\d+)$/m)[1]);
}

test(`${IDLE} idle connections are accepted and still open when the load ends`, { skip }, async () => {
  let most = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      most = Math.max(most, await openConnections(server.url));
      await sleep(50);
    }
  })();
  const r = await loadtest(server.url, '--concurrency', '2', '--duration', '1.5');
  polling = false;
  await poller;
  assert.equal(r.errors.total, 0, JSON.stringify(r.errors));
  assert.ok(r.requests.succeeded >= 2);
  assert.equal(r.config.idle_connections, IDLE);
  assert.deepEqual({ ...r.idle_connections, open_s: 0 }, { requested: IDLE, opened: IDLE, open_at_end: IDLE, open_s: 0 });
  assert.ok(most >= IDLE, `parley_connections peaked at ${most}`);
  // The load test closed them: the server sees them go.
  for (let i = 0; i < 100 && (await openConnections(server.url)) > 10; i++) await sleep(50);
  assert.ok((await openConnections(server.url)) <= 10);
});

test('connections the server closes (--idle-timeout 1) are not counted as open', { skip }, async () => {
  const short = await startServer(['--idle-timeout', '1']);
  try {
    const r = await loadtest(short.url, '--concurrency', '1', '--duration', '2.5');
    assert.equal(r.idle_connections.opened, IDLE);
    assert.equal(r.idle_connections.open_at_end, 0);
    assert.equal(r.errors.total, 0, JSON.stringify(r.errors));
  } finally {
    assert.equal((await short.stop()).code, 0);
  }
});

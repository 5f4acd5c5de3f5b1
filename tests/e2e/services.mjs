// Real redis-server and nginx processes for the cluster and deployment tests,
// on free loopback ports, stopped by the tests (SIGKILL after 5 s).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './server.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const canConnect = (port) => new Promise((resolve) => {
  const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
  s.on('error', () => resolve(false));
});

// Spawns a long-running process; resolves once `ready(output so far)` holds.
async function spawnService(name, command, args, ready) {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => { output += d; });
  proc.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const end = Date.now() + 10000;
  while (!(await ready(output))) {
    if (proc.exitCode !== null || Date.now() > end) {
      proc.kill('SIGKILL');
      throw new Error(`${name} did not start: ${output}`);
    }
    await sleep(20);
  }
  const running = () => proc.exitCode === null && proc.signalCode === null;
  return {
    async stop() {
      if (running()) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
    // A crash: SIGKILL.
    async kill() {
      if (running()) proc.kill('SIGKILL');
      await exited;
    },
  };
}

// redis-server on `port` (default: a free one) with its files in `dir`,
// without persistence unless `appendonly`: then it writes an AOF there, which
// a restart on the same port and dir loads. With `password` it requires AUTH.
// `url` is for --redis-url (with the password).
export async function startRedis(dir, { port, appendonly = false, password } = {}) {
  port ??= await freePort();
  const auth = password ? ['--requirepass', password] : [];
  const redis = await spawnService('redis-server', 'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', appendonly ? 'yes' : 'no', '--dir', dir, ...auth],
    (out) => out.includes('Ready to accept connections'));
  const userinfo = password ? `:${encodeURIComponent(password)}@` : '';
  return { ...redis, port, url: `redis://${userinfo}127.0.0.1:${port}/0` };
}

// nginx as the test's own process with `httpConfig` (text for the http
// block, given the run directory and port), all its files in a new directory under `parent`.
export async function startNginx(parent, httpConfig) {
  const port = await freePort();
  const dir = mkdtempSync(join(parent, 'nginx-'));
  mkdirSync(join(dir, 'tmp'));
  const conf = join(dir, 'nginx.conf');
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/tmp;`).join(' ');
  writeFileSync(conf, `events {}\nhttp {\n${temps}\n${httpConfig(dir, port)}\n}\n`);
  const nginx = await spawnService('nginx', 'nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf,
    '-g', `daemon off; pid ${dir}/nginx.pid;`], () => canConnect(port));
  return { ...nginx, dir, url: `http://127.0.0.1:${port}` };
}

// nginx with deploy/nginx's parley.conf (deploy/nginx/render; its main
// nginx.conf is replaced by startNginx's) in front of the replicas on
// `replicaPorts`; accessLog() parses its JSON access log.
export async function startParleyNginx(parent, replicaPorts) {
  const nginx = await startNginx(parent, (dir, port) => {
    execFileSync(join(root, 'deploy/nginx/render'), ['--listen', `127.0.0.1:${port}`, '--dir', dir,
      ...replicaPorts.map((p) => `127.0.0.1:${p}`)]);
    return `include ${dir}/parley.conf;`;
  });
  return {
    ...nginx,
    // By request id. nginx writes each line when its request ends.
    accessLog() {
      const lines = readFileSync(join(nginx.dir, 'parley-access.log'), 'utf8').trim().split('\n').filter(Boolean);
      return new Map(lines.map((l) => JSON.parse(l)).map((e) => [e.request_id, e]));
    },
  };
}

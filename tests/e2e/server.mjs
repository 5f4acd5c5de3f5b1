// Starts `parley serve` on a free loopback port for a test file and stops it.
// The binary comes from $PARLEY_BINARY (set by ctest), else build/parley.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const binary = process.env.PARLEY_BINARY || join(root, 'build', 'parley');

// Starts a server; resolves once it printed its listening line. `bare`: only
// --port 0 besides `args`, every other flag at its default (a user's first run).
export function startServer(args = [], env = {}, { bare = false } = {}) {
  const flags = bare ? ['--port', '0'] : ['--host', '127.0.0.1', '--port', '0', '--threads', '1'];
  const proc = spawn(binary, ['serve', ...flags, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`server did not start: ${stderr}`)); }, 15000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/parley: listening on (http:\/\/127\.0\.0\.1:(\d+))/);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1],
        port: Number(m[2]),
        proc,
        exited,
        stderr: () => stderr,
        // SIGTERM (graceful); resolves with the exit status.
        async stop(signal = 'SIGTERM') {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
          const t = setTimeout(() => proc.kill('SIGKILL'), 20000);
          const result = await exited;
          clearTimeout(t);
          return result;
        },
      });
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${stderr}`)); });
  });
}

// A random-weights model of the given shape (mkmodel flags) in a temporary
// directory, with a long context; remove() deletes it.
export function makeRandomModel(name, shape) {
  const dir = mkdtempSync(join(tmpdir(), 'parley-model-'));
  const path = join(dir, `${name}.gguf`);
  execFileSync(binary, ['mkmodel', ...shape, '--ctx', '4096', '--type', 'q8_0', '-o', path], { stdio: 'ignore' });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// Slow enough (a few hundred tokens per second) to cancel or drain requests mid-generation.
export function makeSlowModel() {
  return makeRandomModel('slow', ['--dim', '256', '--layers', '4', '--heads', '4']);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function stats(url) {
  return (await fetch(`${url}/v1/stats`)).json();
}

// Polls `predicate(stats)` until it holds or `ms` passed; returns the last stats.
export async function waitForStats(url, predicate, ms = 5000) {
  const end = Date.now() + ms;
  let s = await stats(url);
  while (!predicate(s) && Date.now() < end) {
    await sleep(20);
    s = await stats(url);
  }
  return s;
}

// Reads an SSE response body into its parsed `data:` events ('[DONE]' kept as a string).
export async function readSse(response) {
  const text = await response.text();
  return text.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => {
    const data = b.slice(6);
    return data === '[DONE]' ? data : JSON.parse(data);
  });
}

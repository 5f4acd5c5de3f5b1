// README.md's shell examples, as written. Every command of a ```sh block is
// one test, in README order, in one temporary directory (so that a command
// may read what an earlier one wrote):
// - `parley …` (`build/parley` or `parley`: $PARLEY_BINARY) runs when it needs
//   only the binary, the bundled model and the files this test provides:
//   `model.gguf` (a copy of the bundled model), the llama2.c checkpoint
//   `stories260K.bin` / `tok512.bin` (from ../shared, when present), `tests/`
//   and `models/` of the repository. `/tmp/` in a command becomes the
//   temporary directory. It must exit 0; `generate` must print something.
// - `parley serve …` starts on a free 127.0.0.1 port; the block's `curl`
//   commands go to it, and SIGTERM must stop it with status 0.
// - Commands that would take long (`bench`, `bench-serve` on a model above
//   16 MB) or need a server the block does not start (`loadtest`) are not run.
// - Every `parley` command, run or not, must name a subcommand of
//   `parley --help` and only flags that `parley SUB --help` lists.
// - Anything else (scripts/run, scripts/test: package installs, the whole
//   suite, a long-lived server) is skipped, and says why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binary } from './server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shared = join(root, '..', 'shared');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const kRunLimitMs = 30000;
const kLargeModelBytes = 16 << 20;

// Shell words of one command line (quotes and backslashes as sh reads them),
// up to an unquoted `#` that starts a word.
function shellWords(line) {
  const words = [];
  let word = null;
  for (let i = 0; i < line.length; ++i) {
    const c = line[i];
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '#' && word === null) {
      break;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let s = '';
      for (++i; i < line.length && line[i] !== '"'; ++i) {
        if (line[i] === '\\' && '"\\$`'.includes(line[i + 1])) ++i;
        s += line[i];
      }
      if (i >= line.length) throw new Error(`unterminated " in: ${line}`);
      word = (word ?? '') + s;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

// The ```sh blocks, each a list of commands (continuation lines joined).
function shellBlocks(markdown) {
  const blocks = [];
  for (const m of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    const commands = [];
    let pending = '';
    for (const line of m[1].split('\n')) {
      if (line.endsWith('\\')) {
        pending += line.slice(0, -1) + ' ';
        continue;
      }
      const text = (pending + line).trim();
      pending = '';
      if (text && !text.startsWith('#')) commands.push({ text, words: shellWords(text) });
    }
    blocks.push(commands);
  }
  return blocks;
}

const isParley = (w) => w === 'build/parley' || w === 'parley';

// Every option a `--help` text lists (`-m,--model TEXT`, `--stop TEXT ...`).
function helpFlags(text) {
  const flags = new Set();
  for (const line of text.split('\n')) {
    const m = line.match(/^\s+((?:-{1,2}[\w-]+,?)+)/);
    if (m) for (const f of m[1].split(',')) if (f) flags.add(f);
  }
  return flags;
}

function help(args) {
  const r = spawnSync(binary, [...args, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `parley ${args.join(' ')} --help: ${r.stderr}`);
  return r.stdout;
}

const subcommands = new Set([...help([]).matchAll(/^ {2}([a-z][\w-]*)\s{2,}/gm)].map((m) => m[1]));

function checkFlags(words) {
  const sub = words[1];
  assert.ok(subcommands.has(sub), `'${sub}' is not a subcommand of parley (parley --help)`);
  const known = helpFlags(help([sub]));
  for (const w of words.slice(2)) {
    if (!/^--?[A-Za-z]/.test(w)) continue;
    const flag = w.split('=')[0];
    assert.ok(known.has(flag), `parley ${sub}: ${flag} is not a flag of 'parley ${sub} --help'`);
  }
}

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-readme-'));
  copyFileSync(join(root, 'models', 'stories260K.gguf'), join(dir, 'model.gguf'));
  for (const name of ['stories260K.bin', 'tok512.bin']) {
    const from = join(shared, 'models', name);
    if (existsSync(from)) copyFileSync(from, join(dir, name));
  }
  symlinkSync(join(root, 'tests'), join(dir, 'tests'));
  symlinkSync(join(root, 'models'), join(dir, 'models'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

// The command's words as they run here: the binary, /tmp/ and ../shared/ mapped.
function localWords(words) {
  return words.slice(1).map((w) => w.replaceAll('/tmp/', `${dir}/`).replace(/^\.\.\/shared\//, `${shared}/`));
}

// Why a parley command is not run here (null: it is run).
function notRunReason(words) {
  const args = localWords(words);
  for (const a of args) {
    if (a.startsWith(`${shared}/`) && !existsSync(a)) return `needs ${a}, absent here`;
    if (/^(stories260K\.bin|tok512\.bin)$/.test(a) && !existsSync(join(dir, a))) return `needs ${a} from ../shared, absent here`;
  }
  const sub = words[1];
  if (sub === 'loadtest') return 'needs a server under load for its duration';
  if (sub === 'bench' || sub === 'bench-serve') {
    const i = args.findIndex((a) => a === '-m' || a === '--model');
    if (i >= 0) {
      const model = resolve(dir, args[i + 1]);
      if (!existsSync(model)) return `its model ${args[i + 1]} was not made here`;
      if (statSync(model).size > kLargeModelBytes) return `benchmarks a ${Math.round(statSync(model).size / 1e6)} MB model`;
    }
  }
  return null;
}

function runParley(words, input) {
  const env = { ...process.env };
  delete env.PARLEY_MODEL;  // the bundled model, as the README says
  const r = spawnSync(binary, localWords(words), { cwd: dir, env, input, encoding: 'utf8', timeout: kRunLimitMs });
  assert.equal(r.error, undefined, `${words.join(' ')}: ${r.error}`);
  assert.equal(r.status, 0, `${words.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return r;
}

// `parley serve …` as written, but on a free port of 127.0.0.1.
function startServe(words) {
  const args = localWords(words);
  for (const flag of ['--port', '--host']) {
    const i = args.indexOf(flag);
    if (i >= 0) args.splice(i, 2);
  }
  args.push('--host', '127.0.0.1', '--port', '0');
  const env = { ...process.env };
  delete env.PARLEY_MODEL;
  const proc = spawn(binary, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const port = new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`serve did not start: ${stderr}`)); }, 15000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/parley: listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve exited (${code}): ${stderr}`)); });
  });
  return {
    port,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 20000);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
  };
}

function checkCurlAnswer(text, words) {
  assert.ok(text.length > 0, `${words.join(' ')}: no answer`);
  if (text.includes('data: ')) {
    assert.match(text, /data: \[DONE\]/, 'the stream ends with [DONE]');
    for (const event of text.split('\n\n').filter((e) => e.startsWith('data: {'))) {
      assert.equal(JSON.parse(event.slice(6)).error, undefined, event);
    }
  } else {
    assert.equal(JSON.parse(text).error, undefined, text);
  }
}

const blocks = shellBlocks(readme);

test('README.md has shell examples of parley and a server', () => {
  const all = blocks.flat();
  assert.ok(all.filter((c) => isParley(c.words[0])).length >= 5, 'at least five parley commands');
  assert.ok(all.some((c) => isParley(c.words[0]) && c.words[1] === 'serve'), 'a parley serve example');
});

for (const [b, commands] of blocks.entries()) {
  let server = null;
  for (const { words } of commands) {
    const shown = words.map((w) => (/[\s"'#]/.test(w) ? JSON.stringify(w) : w)).join(' ');
    const name = `block ${b + 1}: ${shown.length > 110 ? shown.slice(0, 107) + '...' : shown}`;
    if (isParley(words[0])) {
      const sub = words[1];
      if (sub === 'serve') {
        test(name, async () => {
          checkFlags(words);
          if (server) assert.equal((await server.stop()).code, 0);
          server = startServe(words);
          assert.ok((await server.port) > 0);
        });
      } else {
        test(name, (t) => {
          checkFlags(words);
          const reason = notRunReason(words);  // here: earlier commands may have made its inputs
          if (reason) return t.diagnostic(`flags checked, not run: ${reason}`);
          const r = runParley(words, sub === 'chat' ? 'Once upon a time\n/quit\n' : undefined);
          if (sub === 'generate' || sub === 'tokenize' || sub === 'chat') assert.ok(r.stdout.trim().length > 0, 'prints an answer');
        });
      }
    } else if (words[0] === 'curl') {
      test(name, async (t) => {
        if (!server) return t.skip('no server started before it in this block');
        const port = await server.port;
        const args = words.slice(1).map((w) => w.replace(/^(https?:\/\/)?(localhost|127\.0\.0\.1):8080/, `$1127.0.0.1:${port}`));
        const r = spawnSync('curl', args, { encoding: 'utf8', timeout: kRunLimitMs });
        if (r.error?.code === 'ENOENT') return t.skip('curl is not installed');
        assert.equal(r.status, 0, `curl exited ${r.status}: ${r.stderr}`);
        checkCurlAnswer(r.stdout, words);
      });
    } else {
      test(name, { skip: `${words[0]} installs packages, builds, runs the whole suite or a long-lived server` }, () => {});
    }
  }
  if (commands.some((c) => isParley(c.words[0]) && c.words[1] === 'serve')) {
    test(`block ${b + 1}: the server stops cleanly on SIGTERM`, async () => {
      assert.ok(server, 'the server started');
      assert.equal((await server.stop()).code, 0);
      server = null;
    });
  }
}

// Time to first token of turns 1..N of one session, with the prefix cache on
// and off: each turn resends the whole history, and with the prefix cache only
// the new tokens are prefilled.
//   node bench/multiturn.mjs [--model PATH] [--turns 8] [--max-tokens 64] [--threads 2] [--binary build/parley]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    binary: { type: 'string', default: process.env.PARLEY_BINARY || 'build/parley' },
    model: { type: 'string', default: 'models/stories260K.gguf' },
    turns: { type: 'string', default: '8' },
    'max-tokens': { type: 'string', default: '64' },
    threads: { type: 'string', default: '2' },
  },
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));

function startServer(extra) {
  const proc = spawn(opt.binary, ['serve', '-m', opt.model, '--port', '0', '--threads', opt.threads, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  process.on('exit', () => proc.kill('SIGKILL'));  // never leave a server behind
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve({ url: m[1], stop: () => new Promise((r) => { proc.on('exit', r); proc.kill('SIGTERM'); }) });
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

const question = (i) => `Turn ${i}: tell me more about the little red boat, the old fisherman and the big grey whale in the sea.`;

// Streams one turn; returns its TTFT (ms) and usage.
async function turn(url, session, i) {
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      session_id: session, messages: [{ role: 'user', content: question(i) }], max_tokens: Number(opt['max-tokens']),
      temperature: 0, ignore_eos: true, cache: false, stream: true, stream_options: { include_usage: true },
    }),
  });
  if (r.status !== 200) throw new Error(`turn ${i}: HTTP ${r.status} ${await r.text()}`);
  let ttft = null;
  let usage = null;
  let buffer = '';
  for await (const chunk of r.body) {
    buffer += Buffer.from(chunk).toString();
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: {')) continue;
      const data = JSON.parse(event.slice(6));
      if (ttft === null && data.choices?.[0]?.delta?.content) ttft = performance.now() - t0;
      if (data.usage) usage = data.usage;
    }
  }
  return { ttft, usage };
}

async function run(extra) {
  const server = await startServer(extra);
  try {
    const created = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ system_prompt: 'You are a storyteller who remembers everything.', max_turns: Number(opt.turns) }),
    });
    const { id } = await created.json();
    const rows = [];
    for (let i = 1; i <= Number(opt.turns); ++i) rows.push(await turn(server.url, id, i));
    return rows;
  } finally {
    await server.stop();
  }
}

const on = await run([]);
const off = await run(['--no-prefix-cache']);
console.log(`model ${opt.model}, ${opt['max-tokens']} tokens per answer, ${opt.threads} threads`);
console.log('| turn | prompt tokens | cached (prefix cache on) | TTFT, prefix cache on | TTFT, prefix cache off |');
console.log('| --- | --- | --- | --- | --- |');
for (let i = 0; i < on.length; ++i) {
  const u = on[i].usage;
  console.log(`| ${i + 1} | ${u.prompt_tokens} | ${u.prompt_tokens_details.cached_tokens} | ${on[i].ttft.toFixed(0)} ms | ${off[i].ttft.toFixed(0)} ms |`);
}

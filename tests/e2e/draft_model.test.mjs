// Speculative decoding with a draft model through the server (`--draft-model`,
// docs/api.md): the same greedy text with and without it per request, the
// draft's counters in /metrics, the draft shared with `--fallback-model`, and
// a draft of another vocabulary refused at start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, startServer, stats } from './server.mjs';

const bundled = join(process.cwd(), 'models', 'stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'parley-draft-'));
let server;
// The bundled model drafts for itself and is the fallback model too (loaded once);
// no response cache, which would answer the second request.
before(async () => {
  server = await startServer(['--draft-model', bundled, '--fallback-model', bundled, '--spec-tokens', '4', '--spec-fixed',
    '--response-cache-bytes', '0']);
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

async function complete(body) {
  const r = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

test('drafted and plain requests give the same greedy text', async () => {
  const request = { prompt: 'Once upon a time', max_tokens: 48, temperature: 0, ignore_eos: true };
  const plain = await complete({ ...request, speculative: false });
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  const fast = await complete(request);
  assert.equal(fast.status, 200, JSON.stringify(fast.body));
  assert.equal(fast.body.choices[0].text, plain.body.choices[0].text);
  const s = await stats(server.url);
  assert.ok(s.spec_accepted > 0 && s.spec_accepted <= s.spec_drafted, JSON.stringify(s));
  assert.ok(s.spec_draft_time_us > 0, JSON.stringify(s));
  assert.equal(s.draft_kv_blocks_used, 0);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /^parley_spec_draft_time_us_total [1-9]\d*$/m);
  assert.match(metrics, /^parley_draft_kv_blocks_used 0$/m);
});

test('a draft model with another vocabulary is refused at startup', async () => {
  const other = join(dir, 'other.gguf');
  execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '1', '--heads', '2', '--vocab-size', '600', '-o', other],
    { stdio: 'ignore' });
  await assert.rejects(startServer(['--draft-model', other]), /--draft-model: its vocabulary has 600 tokens/);
});

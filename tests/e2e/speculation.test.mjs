// Speculative decoding through the server (`--spec ngram`, docs/api.md):
// the same text with and without it per request ("speculative": false), its
// counters in /v1/stats and /metrics, and the field refused when not a boolean.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stats } from './server.mjs';

let server;
before(async () => { server = await startServer(['--spec', 'ngram', '--spec-tokens', '4']); });
after(async () => assert.equal((await server.stop()).code, 0));

async function complete(body) {
  const r = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

const passage = 'Lily saw a big red ball in the park. She ran to get it and played with her friends.';
const request = (extra) => ({ prompt: `${passage} ${passage} ${passage}`, max_tokens: 64, temperature: 0,
  ignore_eos: true, ...extra });

test('speculative and plain requests give the same text', async () => {
  const plain = await complete(request({ speculative: false }));
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  const fast = await complete(request({}));
  assert.equal(fast.status, 200, JSON.stringify(fast.body));
  assert.equal(fast.body.choices[0].text, plain.body.choices[0].text);
  assert.equal(fast.body.usage.completion_tokens, plain.body.usage.completion_tokens);
  const s = await stats(server.url);
  assert.ok(s.spec_accepted <= s.spec_drafted, JSON.stringify(s));
  assert.ok(s.spec_acceptance_rate >= 0 && s.spec_acceptance_rate <= 1);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /^parley_spec_drafted_total \d+$/m);
  assert.match(metrics, /^parley_spec_tokens_total \d+$/m);
});

test('a seeded sampled answer is the same with and without speculation', async () => {
  const body = { temperature: 0.9, top_p: 0.95, seed: 7 };
  const plain = await complete(request({ ...body, speculative: false }));
  const fast = await complete(request(body));
  assert.equal(fast.body.choices[0].text, plain.body.choices[0].text);
});

test('speculative must be a boolean', async () => {
  const r = await complete(request({ speculative: 'yes' }));
  assert.equal(r.status, 400);
  assert.equal(r.body.error.param, 'speculative');
});

// POST /v1/embeddings with the official OpenAI client against `parley serve`
// (bundled stories260K: 64 dimensions, a 512-token context).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

let server;
let client;
before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => assert.equal((await server.stop()).code, 0));

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const embed = async (input, extra = {}) => (await client.embeddings.create({ model: 'stories260K', input, ...extra }));

function post(body, url = server.url) {
  return fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body) });
}

test('OpenAI\'s shape: one unit vector per input, in order, with usage', async () => {
  const r = await embed(['Once upon a time', 'The dog ran to the park.', 'Lily']);
  assert.equal(r.object, 'list');
  assert.equal(r.model, 'stories260K');
  assert.deepEqual(r.data.map((d) => [d.object, d.index]), [['embedding', 0], ['embedding', 1], ['embedding', 2]]);
  for (const d of r.data) {
    assert.equal(d.embedding.length, 64);
    assert.ok(Math.abs(dot(d.embedding, d.embedding) - 1) < 1e-5, 'normalised');
  }
  assert.ok(r.usage.prompt_tokens > 6);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
});

test('deterministic; a batch equals one-by-one; identical texts have cosine 1, different ones less', async () => {
  const texts = ['Once upon a time there was a cat.', 'Tom liked to play ball.', 'Once upon a time there was a cat.'];
  const batch = (await embed(texts)).data.map((d) => d.embedding);
  const alone = [];
  for (const t of texts) alone.push((await embed(t)).data[0].embedding);
  for (let i = 0; i < texts.length; i++)
    for (let k = 0; k < 64; k++) assert.ok(Math.abs(batch[i][k] - alone[i][k]) < 1e-5, `input ${i} element ${k}`);
  assert.deepEqual((await embed(texts[0])).data[0].embedding, alone[0], 'the same request, the same vector');
  assert.ok(Math.abs(dot(batch[0], batch[2]) - 1) < 1e-6);
  assert.ok(dot(batch[0], batch[1]) < 0.999);
});

test('floats and base64 carry the same vector; token ids are taken as given', async () => {
  const asFloat = (await post({ input: 'A red ball', encoding_format: 'float' }).then((r) => r.json())).data[0].embedding;
  const b64 = (await post({ input: 'A red ball', encoding_format: 'base64' }).then((r) => r.json())).data[0].embedding;
  assert.equal(typeof b64, 'string');
  const bytes = Buffer.from(b64, 'base64');
  const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
  assert.deepEqual(decoded, asFloat.map((x) => Math.fround(x)));
  const tokens = await embed([[1, 319, 400, 287], [1, 319]]);
  assert.equal(tokens.data.length, 2);
  assert.equal(tokens.usage.prompt_tokens, 6);
});

test('bad input is a 400 naming the field, never a 5xx', async () => {
  const cases = [
    [{}, 'input'], [{ input: 5 }, 'input'], [{ input: [] }, 'input'], [{ input: '' }, 'input'],
    [{ input: ['a', 7] }, 'input'], [{ input: ['a', [1, 2]] }, 'input'], [{ input: [[1, 99999]] }, 'input'],
    [{ input: Array(2049).fill('a') }, 'input'], [{ input: 'Once upon a time '.repeat(200) }, 'input'],
    [{ input: 'a', dimensions: 32 }, 'dimensions'], [{ input: 'a', encoding_format: 'int8' }, 'encoding_format'],
    [{ input: 'a', priority: 'high' }, 'priority'], [{ input: 'a', user: 3 }, 'user'],
  ];
  for (const [body, param] of cases) {
    const r = await post(body);
    const text = await r.text();
    assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${text}`);
    assert.equal(JSON.parse(text).error.param, param, text);
  }
  assert.equal((await post({ input: 'a', model: 'nope' })).status, 404);
  assert.equal((await post('{"input": ')).status, 400);
  assert.equal((await post({ input: 'a', dimensions: 64 })).status, 200, 'the model\'s own size is fine');
});

test('--pooling last takes the last token\'s state; a bad --pooling stops the start', async () => {
  const last = await startServer(['--pooling', 'last']);
  try {
    const lastClient = new OpenAI({ baseURL: `${last.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const text = 'The little bird sang a song.';
    const [mean, lastState] = await Promise.all([embed(text), lastClient.embeddings.create({ input: text })]);
    assert.ok(dot(mean.data[0].embedding, lastState.data[0].embedding) < 0.999, 'a different pooling');
  } finally {
    assert.equal((await last.stop()).code, 0);
  }
  await assert.rejects(startServer(['--pooling', 'max']), /pooling/);
});

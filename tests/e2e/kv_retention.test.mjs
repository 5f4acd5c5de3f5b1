// The per-request KV retention policy ("kv_retention", docs/kv-policies.md)
// on every generation route. Under `full` a generation ends at the end of the
// context (the bundled stories260K's 512 tokens, as /v1/models says), under a
// bounded policy it runs to max_tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startServer, readSse } from './server.mjs';

let CONTEXT;
let server;
before(async () => {
  server = await startServer();
  CONTEXT = (await (await fetch(`${server.url}/v1/models`)).json()).data[0].max_model_len;
  assert.equal(CONTEXT, 512);
});
after(async () => assert.equal((await server.stop()).code, 0));

async function post(path, body) {
  const r = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

const long = (kv, maxTokens) => ({ prompt: 'Once upon a time', max_tokens: maxTokens, ignore_eos: true,
  temperature: 0, kv_retention: kv });

test('full stops at the end of the context; window goes on to max_tokens', async () => {
  const full = await post('/v1/completions', long('full', CONTEXT));
  assert.equal(full.status, 200, JSON.stringify(full.body));
  assert.equal(full.body.choices[0].finish_reason, 'length');
  const { prompt_tokens: p, completion_tokens: n } = full.body.usage;
  assert.equal(p + n, CONTEXT);  // the context end, before max_tokens
  assert.ok(n < CONTEXT);

  const window = await post('/v1/completions', long({ policy: 'window', window: 32 }, 3 * CONTEXT));
  assert.equal(window.status, 200, JSON.stringify(window.body));
  assert.equal(window.body.choices[0].finish_reason, 'length');
  assert.equal(window.body.usage.completion_tokens, 3 * CONTEXT);
  // Past the window the model no longer sees the start: the policy reached the engine.
  assert.notEqual(window.body.choices[0].text.slice(0, full.body.choices[0].text.length), full.body.choices[0].text);

  // Without kv_retention max_tokens stays bounded by the context (the server's default is full).
  const plain = await post('/v1/completions', { prompt: 'Hi', max_tokens: 3 * CONTEXT });
  assert.equal(plain.status, 400);
  assert.equal(plain.body.error.param, 'max_tokens');
});

test('sink and heavy-hitter on streamed chat completions, /chat and the WebSocket', async () => {
  const r = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 200,
      ignore_eos: true, stream: true, stream_options: { include_usage: true },
      kv_retention: { policy: 'sink', sink: 4, window: 40 } }) });
  assert.equal(r.status, 200);
  const events = await readSse(r);
  assert.equal(events.at(-1), '[DONE]');
  assert.equal(events.at(-2).usage.completion_tokens, 200);
  assert.equal(events.find((e) => e.choices?.[0]?.finish_reason).choices[0].finish_reason, 'length');

  const batch = await post('/chat', { prompts: ['Lily liked', 'The sun'], max_tokens: 150, ignore_eos: true,
    kv_retention: { policy: 'heavy-hitter', sink: 2, heavy: 16, window: 32 } });
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  assert.equal(batch.body.usage.completion_tokens, 2 * 150);

  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const end = new Promise((resolve) => ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.error || m.finished) resolve(m);
  }));
  ws.send(JSON.stringify({ prompt: 'The bird sang', max_tokens: 160, ignore_eos: true,
    kv_retention: { policy: 'window', window: 48 } }));
  const m = await end;
  ws.close();
  assert.equal(m.finish_reason, 'length', JSON.stringify(m));
  assert.equal(m.usage.completion_tokens, 160);
});

test('invalid kv_retention values are 400 naming kv_retention, on every route', async () => {
  const invalid = [
    'lru', 7, ['window'], {}, { policy: 'Window' }, { policy: 3 },
    { policy: 'full', window: 16 },                           // a field full does not have
    { policy: 'window', sink: 4 },                            // nor window
    { policy: 'sink', heavy: 4 },                             // nor sink
    { policy: 'window', window: 0 }, { policy: 'sink', sink: -1 }, { policy: 'window', window: 2.5 },
    { policy: 'window', window: '32' },
    { policy: 'window', window: CONTEXT + 1 },
    { policy: 'heavy-hitter', sink: 200, heavy: 200, window: 200 },  // a budget of 600 > 512
  ];
  for (const kv of invalid) {
    for (const [path, body] of [['/v1/completions', { prompt: 'Hi' }],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }] }], ['/chat', { prompts: ['Hi'] }]]) {
      const r = await post(path, { ...body, max_tokens: 4, kv_retention: kv });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(kv)}`);
      assert.equal(r.body.error.param, 'kv_retention', JSON.stringify(r.body));
      assert.match(r.body.error.message, /kv_retention/);
    }
  }
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const reply = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()))));
  ws.send(JSON.stringify({ prompt: 'Hi', kv_retention: { policy: 'nope' } }));
  const m = await reply;
  ws.close();
  assert.equal(m.error.param, 'kv_retention', JSON.stringify(m));
});

test('serve --kv-policy sets the default for requests that name none', async () => {
  const windowed = await startServer(['--kv-policy', 'window', '--kv-window', '32']);
  try {
    const r = await fetch(`${windowed.url}/v1/completions`, { method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 2 * CONTEXT, ignore_eos: true }) });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].finish_reason, 'length');
    assert.equal(body.usage.completion_tokens, 2 * CONTEXT);  // past the context: the default reached the engine
  } finally {
    assert.equal((await windowed.stop()).code, 0);
  }
});

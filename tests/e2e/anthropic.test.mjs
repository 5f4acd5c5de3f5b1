// Anthropic's official client against `parley serve` with the bundled model:
// POST /v1/messages, streamed and not, its events in Anthropic's order,
// x-api-key auth, and every mistake answered with Anthropic's error shape
// and a 4xx, never a 5xx.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

const KEY = 'sk-ant-test';
const SLOW = 'sk-ant-slow';
let server, keyed, dir, client;
const model = 'stories260K';
const messages = [{ role: 'user', content: 'Tell me a story about a cat.' }];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-anthropic-'));
  writeFileSync(join(dir, 'keys.json'), JSON.stringify([
    { name: 'app', key: KEY }, { name: 'slow', key: SLOW, rps: 0.01 }]));
  server = await startServer();
  keyed = await startServer(['--api-keys-file', join(dir, 'keys.json'), '--max-body-bytes', '20000']);
  client = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0);
  await keyed?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a message has Anthropic\'s shape and the chat completion\'s text', async () => {
  const system = 'You tell short stories.';
  const m = await client.messages.create({ model, system, messages, max_tokens: 30, temperature: 0 });
  assert.match(m.id, /^msg_/);
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.equal(m.model, model);
  assert.equal(m.content.length, 1);
  assert.equal(m.content[0].type, 'text');
  assert.ok(m.content[0].text.length > 0);
  assert.ok(['end_turn', 'max_tokens'].includes(m.stop_reason), m.stop_reason);
  assert.equal(m.stop_sequence, null);
  assert.ok(m.usage.input_tokens > 0);
  assert.ok(m.usage.output_tokens > 0 && m.usage.output_tokens <= 30);
  // The same conversation through the OpenAI route: the same prompt, so the same greedy text.
  const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const chat = await openai.chat.completions.create({
    model, messages: [{ role: 'system', content: system }, ...messages], max_tokens: 30, temperature: 0 });
  assert.equal(m.content[0].text, chat.choices[0].message.content);
  assert.equal(m.usage.input_tokens, chat.usage.prompt_tokens);
  assert.equal(m.usage.output_tokens, chat.usage.completion_tokens);
  // Text blocks are the same as a string.
  const blocks = await client.messages.create({ model, max_tokens: 30, temperature: 0,
    system: [{ type: 'text', text: system }],
    messages: [{ role: 'user', content: [{ type: 'text', text: messages[0].content }] }] });
  assert.equal(blocks.content[0].text, m.content[0].text);
});

test('a stream sends Anthropic\'s events in order; finalMessage() is the whole message', async () => {
  const params = { model, messages, max_tokens: 40, temperature: 0 };
  const whole = await client.messages.create(params);
  const stream = await client.messages.create({ ...params, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  const types = events.map((e) => e.type);
  assert.deepEqual(types.slice(0, 2), ['message_start', 'content_block_start']);
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
  const deltas = events.filter((e) => e.type === 'content_block_delta');
  assert.equal(deltas.length, types.length - 5, 'only deltas between start and stop');
  assert.ok(deltas.length > 5, 'tokens arrive as separate events');
  assert.ok(deltas.every((d) => d.index === 0 && d.delta.type === 'text_delta'));
  assert.equal(deltas.map((d) => d.delta.text).join(''), whole.content[0].text);
  const start = events[0].message;
  assert.equal(start.role, 'assistant');
  assert.deepEqual(start.content, []);
  assert.equal(start.stop_reason, null);
  assert.equal(start.usage.input_tokens, whole.usage.input_tokens);
  assert.deepEqual(events[1].content_block, { type: 'text', text: '' });
  const delta = events.at(-2);
  assert.equal(delta.delta.stop_reason, whole.stop_reason);
  assert.equal(delta.usage.output_tokens, whole.usage.output_tokens);

  const helper = client.messages.stream(params);
  const final = await helper.finalMessage();
  assert.match(final.id, /^msg_/);
  assert.deepEqual(final.content, whole.content);
  assert.equal(final.stop_reason, whole.stop_reason);
  assert.deepEqual(final.usage, whole.usage);
});

test('the raw stream: named events, a ping after the content block starts', async () => {
  const r = await fetch(`${server.url}/v1/messages`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, messages, max_tokens: 8, temperature: 0, stream: true }) });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const blocks = (await r.text()).split('\n\n').filter(Boolean);
  const names = blocks.map((b) => b.match(/^event: (.+)\ndata: /)[1]);
  assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
  assert.equal(names.at(-1), 'message_stop');
  for (const b of blocks) assert.equal(JSON.parse(b.split('\ndata: ')[1]).type, b.match(/^event: (.+)/)[1]);
});

test('stop_sequences and max_tokens give their stop reasons', async () => {
  const base = { model, messages, max_tokens: 60, temperature: 0 };
  const free = (await client.messages.create(base)).content[0].text;
  const word = free.split(/\s+/).filter((w) => w.length > 2)[3];
  assert.ok(word, free);
  const stopped = await client.messages.create({ ...base, stop_sequences: ['zzz-never', word] });
  assert.equal(stopped.stop_reason, 'stop_sequence');
  assert.equal(stopped.stop_sequence, word);
  assert.equal(stopped.content[0].text, free.slice(0, free.indexOf(word)));
  const cut = await client.messages.create({ ...base, max_tokens: 3 });
  assert.equal(cut.stop_reason, 'max_tokens');
  assert.equal(cut.usage.output_tokens, 3);
  const streamed = client.messages.stream({ ...base, stop_sequences: [word] });
  const final = await streamed.finalMessage();
  assert.equal(final.stop_reason, 'stop_sequence');
  assert.equal(final.stop_sequence, word);
});

// The status and Anthropic's error body of a rejected request.
async function refusal(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Anthropic.APIError, String(e));
    assert.equal(e.error?.type, 'error', JSON.stringify(e.error));
    assert.equal(typeof e.error.error.message, 'string');
    return { status: e.status, type: e.error.error.type, message: e.error.error.message };
  }
  assert.fail('the request was not refused');
}

test('mistakes are 4xx in Anthropic\'s error shape, naming the field', async () => {
  const ok = { model, messages, max_tokens: 8 };
  const cases = [
    [{ model, messages }, 400, /max_tokens/],
    [{ ...ok, max_tokens: 'eight' }, 400, /max_tokens/],
    [{ ...ok, max_tokens: 0 }, 400, /max_tokens/],
    [{ ...ok, messages: [] }, 400, /messages/],
    [{ ...ok, messages: 'hello' }, 400, /messages/],
    [{ ...ok, messages: [{ role: 'robot', content: 'hi' }] }, 400, /messages\[0\]\.role/],
    [{ ...ok, messages: [{ role: 'user', content: 42 }] }, 400, /messages\[0\]\.content/],
    [{ ...ok, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://x/y.png' } }] }] },
      400, /messages\[0\]\.content\[0\]\.type/],
    [{ ...ok, temperature: 1.5 }, 400, /temperature/],
    [{ ...ok, stop_sequences: [1] }, 400, /stop_sequences/],
    [{ ...ok, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] }, 400, /'tools'/],
    [{ ...ok, tool_choice: { type: 'auto' } }, 400, /tool_choice/],
    [{ ...ok, thinking: { type: 'enabled', budget_tokens: 1024 } }, 400, /thinking/],
    [{ ...ok, metadata: { user_id: 'u', session: 'x' } }, 400, /metadata\.session/],
    [{ ...ok, messages: [{ role: 'user', content: 'word '.repeat(600) }] }, 400, /context is 512 tokens/],
    [{ ...ok, model: 'claude-opus-4' }, 404, /claude-opus-4/],
  ];
  for (const [body, status, message] of cases) {
    const r = await refusal(client.messages.create(body));
    assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 120)}: ${r.message}`);
    assert.equal(r.type, status === 404 ? 'not_found_error' : 'invalid_request_error');
    assert.match(r.message, message);
  }
  // Raw bodies the client would not send: not JSON, not an object, the wrong method.
  for (const [method, body, status] of [['POST', '{"messages": [', 400], ['POST', '[1, 2]', 400], ['GET', undefined, 405]]) {
    const r = await fetch(`${server.url}/v1/messages`, { method, body, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, status);
    const json = await r.json();
    assert.equal(json.type, 'error');
    assert.equal(json.error.type, 'invalid_request_error');
  }
  // The server is unharmed.
  assert.equal((await client.messages.create(ok)).type, 'message');
});

test('x-api-key is the API key; no key, a wrong one, too many requests and too large bodies answer as Anthropic does', async () => {
  const good = new Anthropic({ baseURL: keyed.url, apiKey: KEY, maxRetries: 0 });
  const m = await good.messages.create({ model, messages, max_tokens: 4 });
  assert.equal(m.type, 'message');
  // The bearer token works too (the client's authToken), and x-api-key on the other routes.
  const bearer = new Anthropic({ baseURL: keyed.url, authToken: KEY, apiKey: null, maxRetries: 0 });
  assert.equal((await bearer.messages.create({ model, messages, max_tokens: 4 })).type, 'message');
  assert.equal((await fetch(`${keyed.url}/v1/models`, { headers: { 'x-api-key': KEY } })).status, 200);

  const wrong = await refusal(new Anthropic({ baseURL: keyed.url, apiKey: 'sk-wrong', maxRetries: 0 })
    .messages.create({ model, messages, max_tokens: 4 }));
  assert.deepEqual([wrong.status, wrong.type], [401, 'authentication_error']);
  const none = await fetch(`${keyed.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, max_tokens: 4 }) });
  assert.equal(none.status, 401);
  assert.equal((await none.json()).error.type, 'authentication_error');

  const slow = new Anthropic({ baseURL: keyed.url, apiKey: SLOW, maxRetries: 0 });
  await slow.messages.create({ model, messages, max_tokens: 2 });
  const limited = await refusal(slow.messages.create({ model, messages, max_tokens: 2 }));
  assert.deepEqual([limited.status, limited.type], [429, 'rate_limit_error']);

  const big = await fetch(`${keyed.url}/v1/messages`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x'.repeat(30000) }], max_tokens: 4 }) });
  assert.equal(big.status, 413);
  assert.equal((await big.json()).error.type, 'request_too_large');
});

test('deterministic messages come from the response cache, with the same bytes', async () => {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Once upon a cache' }], max_tokens: 12,
    temperature: 0 });
  const post = () => fetch(`${server.url}/v1/messages`, { method: 'POST',
    headers: { 'content-type': 'application/json' }, body });
  const first = await post();
  const second = await post();
  assert.equal(first.headers.get('x-parley-cache'), 'miss');
  assert.equal(second.headers.get('x-parley-cache'), 'hit');
  const [a, b] = [await first.json(), await second.json()];
  assert.equal(a.content[0].text, b.content[0].text);
  assert.equal(a.stop_reason, b.stop_reason);
  assert.deepEqual(a.usage, b.usage);
});

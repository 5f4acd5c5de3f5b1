// The official OpenAI client's Responses API against `parley serve` with the
// bundled model: POST /v1/responses streamed and not, conversations continued
// with previous_response_id from stored responses (bound to the API key that
// made them), retrieval and deletion, and mistakes answered with a 4xx.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startServer } from './server.mjs';
import { startRedis } from './services.mjs';

const model = 'stories260K';
let server, keyed, client;

// A server without keys, and one with two keys whose responses are kept apart.
before(async () => {
  [server, keyed] = await Promise.all([startServer(), startServer(['--api-key', 'key-a', '--api-key', 'key-b'])]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const results = await Promise.all([server, keyed].map((s) => s?.stop()));
  assert.deepEqual(results.map((r) => r?.code), [0, 0]);
});

// The greedy chat completion of `messages`, for comparison.
async function chat(messages, max_tokens) {
  const r = await client.chat.completions.create({ model, messages, max_tokens, temperature: 0 });
  return { text: r.choices[0].message.content, finish: r.choices[0].finish_reason, usage: r.usage };
}

test('a response has the Responses API\'s shape and the chat completion\'s text', async () => {
  const r = await client.responses.create({ model, instructions: 'You tell stories.', input: 'Tell me a story.',
    max_output_tokens: 30, temperature: 0, metadata: { run: 'shape' } });
  assert.match(r.id, /^resp_[0-9a-f]{32}$/);
  assert.equal(r.object, 'response');
  assert.equal(typeof r.created_at, 'number');
  assert.equal(r.model, model);
  assert.equal(r.instructions, 'You tell stories.');
  assert.equal(r.max_output_tokens, 30);
  assert.deepEqual(r.metadata, { run: 'shape' });
  assert.equal(r.previous_response_id, null);
  assert.equal(r.error, null);
  assert.equal(r.output.length, 1);
  const [item] = r.output;
  assert.equal(item.type, 'message');
  assert.match(item.id, /^msg_/);
  assert.equal(item.role, 'assistant');
  assert.equal(item.status, r.status);  // completed, or incomplete when cut short
  assert.equal(item.content.length, 1);
  assert.equal(item.content[0].type, 'output_text');
  assert.deepEqual(item.content[0].annotations, []);
  assert.equal(r.output_text, item.content[0].text);  // the client's convenience property
  const expected = await chat([{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'Tell me a story.' }], 30);
  assert.equal(item.content[0].text, expected.text);
  assert.equal(r.status, expected.finish === 'stop' ? 'completed' : 'incomplete');
  if (r.status === 'incomplete') assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(r.usage.input_tokens, expected.usage.prompt_tokens);
  assert.equal(r.usage.output_tokens, expected.usage.completion_tokens);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
  assert.equal(typeof r.usage.input_tokens_details.cached_tokens, 'number');
  // Message items with input_text parts are the same as a string.
  const items = await client.responses.create({ model, instructions: 'You tell stories.', max_output_tokens: 30,
    temperature: 0, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Tell me a story.' }] }] });
  assert.equal(items.output_text, r.output_text);
});

test('a stream sends the events in order with sequence numbers; its end is the whole response', async () => {
  const params = { model, input: 'Once upon a time', max_output_tokens: 40, temperature: 0 };
  const whole = await client.responses.create(params);
  const stream = await client.responses.create({ ...params, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  const types = events.map((e) => e.type);
  const terminal = whole.status === 'completed' ? 'response.completed' : 'response.incomplete';
  assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added',
    'response.content_part.added']);
  assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done',
    'response.output_item.done', terminal]);
  const deltas = events.filter((e) => e.type === 'response.output_text.delta');
  assert.equal(deltas.length, events.length - 8, 'only deltas in between');
  assert.ok(deltas.length > 5, 'tokens arrive as separate events');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const text = deltas.map((d) => d.delta).join('');
  assert.equal(text, whole.output_text);
  assert.equal(events[0].response.status, 'in_progress');
  assert.deepEqual(events[0].response.output, []);
  const itemId = events[2].item.id;
  assert.ok(deltas.every((d) => d.item_id === itemId && d.output_index === 0 && d.content_index === 0));
  assert.equal(events.at(-4).text, text);
  assert.equal(events.at(-3).part.text, text);
  assert.equal(events.at(-2).item.content[0].text, text);
  const final = events.at(-1).response;
  assert.equal(final.id, events[0].response.id);
  assert.equal(final.status, whole.status);
  assert.equal(final.output[0].content[0].text, text);
  assert.deepEqual(final.usage, whole.usage);
  // A streamed response is stored before the stream ends.
  const again = await client.responses.retrieve(final.id);
  assert.equal(again.output_text, text);
});

test('previous_response_id continues a stored conversation (instructions are not carried over)', async () => {
  const first = await client.responses.create({ model, instructions: 'Speak softly.', input: 'Lily had a dog.',
    max_output_tokens: 20, temperature: 0 });
  const second = await client.responses.create({ model, previous_response_id: first.id, input: 'What did the dog do?',
    max_output_tokens: 20, temperature: 0 });
  assert.equal(second.previous_response_id, first.id);
  assert.equal(second.instructions, null);
  const expected = await chat([
    { role: 'user', content: 'Lily had a dog.' },
    { role: 'assistant', content: first.output_text },
    { role: 'user', content: 'What did the dog do?' }], 20);
  assert.equal(second.output_text, expected.text);
  assert.equal(second.usage.input_tokens, expected.usage.prompt_tokens);
  // A third turn, streamed, continues the second.
  const stream = await client.responses.create({ model, previous_response_id: second.id, input: 'And then?',
    max_output_tokens: 10, temperature: 0, stream: true });
  let done;
  for await (const e of stream) if (e.type === 'response.completed' || e.type === 'response.incomplete') done = e.response;
  assert.ok(done.usage.input_tokens > second.usage.input_tokens + second.usage.output_tokens);
  assert.equal(done.previous_response_id, second.id);
});

test('stored responses: retrieve, delete, unknown ids and store: false are 404', async () => {
  const r = await client.responses.create({ model, input: 'Hi', max_output_tokens: 8, temperature: 0 });
  assert.equal(r.store, true);
  const got = await client.responses.retrieve(r.id);
  assert.deepEqual(got, r);
  await client.responses.delete(r.id);
  await assert.rejects(client.responses.retrieve(r.id), (e) => e.status === 404 && e.code === 'response_not_found');
  await assert.rejects(client.responses.create({ model, previous_response_id: r.id, input: 'More' }),
    (e) => e.status === 404 && e.code === 'previous_response_not_found' && e.param === 'previous_response_id');
  await assert.rejects(client.responses.create({ model, previous_response_id: 'resp_0123456789abcdef0123456789abcdef',
    input: 'More' }), (e) => e.status === 404 && e.error.type === 'invalid_request_error');
  await assert.rejects(client.responses.retrieve('resp_nope'), (e) => e.status === 404);
  await assert.rejects(client.responses.delete('resp_nope'), (e) => e.status === 404);

  const unstored = await client.responses.create({ model, input: 'Hi', max_output_tokens: 8, store: false });
  assert.equal(unstored.store, false);
  await assert.rejects(client.responses.create({ model, previous_response_id: unstored.id, input: 'More' }),
    (e) => e.status === 404 && e.code === 'previous_response_not_found');
  await assert.rejects(client.responses.retrieve(unstored.id), (e) => e.status === 404);
});

test('a stored response belongs to the API key that created it', async () => {
  const [a, b, wrong] = ['key-a', 'key-b', 'wrong'].map((apiKey) =>
    new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey, maxRetries: 0 }));
  const r = await a.responses.create({ model, input: 'Hi', max_output_tokens: 8 });
  assert.equal((await a.responses.retrieve(r.id)).id, r.id);
  await assert.rejects(b.responses.retrieve(r.id), (e) => e.status === 404);
  await assert.rejects(b.responses.delete(r.id), (e) => e.status === 404);
  await assert.rejects(b.responses.create({ model, previous_response_id: r.id, input: 'More' }), (e) => e.status === 404);
  const next = await a.responses.create({ model, previous_response_id: r.id, input: 'More', max_output_tokens: 4 });
  assert.equal(next.previous_response_id, r.id);
  await assert.rejects(wrong.responses.create({ model, input: 'Hi' }), (e) => e.status === 401);
});

test('replicas sharing Redis continue, retrieve and delete each other\'s responses', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-responses-'));
  const parts = [];
  try {
    const redis = await startRedis(dir);
    parts.push(redis);
    const [one, two] = await Promise.all([1, 2].map(() => startServer(['--redis-url', redis.url, '--api-key', 'k'])));
    parts.push(one, two);
    const [a, b] = [one, two].map((s) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'k', maxRetries: 0 }));
    const first = await a.responses.create({ model, input: 'Lily had a dog.', max_output_tokens: 10, temperature: 0 });
    const second = await b.responses.create({ model, previous_response_id: first.id, input: 'And then?',
      max_output_tokens: 10, temperature: 0 });
    const expected = await chat([{ role: 'user', content: 'Lily had a dog.' },
      { role: 'assistant', content: first.output_text }, { role: 'user', content: 'And then?' }], 10);
    assert.equal(second.output_text, expected.text);
    assert.deepEqual(await a.responses.retrieve(second.id), second);
    await b.responses.delete(first.id);
    await assert.rejects(a.responses.retrieve(first.id), (e) => e.status === 404);
  } finally {
    await Promise.all(parts.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mistakes are 400s naming the field, never 5xx', async () => {
  const ok = { model, input: 'Hi', max_output_tokens: 8 };
  const cases = [
    [{ model }, 'input'],
    [{ ...ok, input: [] }, 'input'],
    [{ ...ok, input: 42 }, 'input'],
    [{ ...ok, input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ ...ok, input: [{ type: 'function_call_output', call_id: 'c1', output: '{}' }] }, 'input[0].type'],
    [{ ...ok, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://x/y.png' }] }] },
      'input[0].content[0].type'],
    [{ ...ok, tools: [{ type: 'function', name: 'f', parameters: {} }] }, 'tools'],
    [{ ...ok, reasoning: { effort: 'low' } }, 'reasoning'],
    [{ ...ok, text: { format: { type: 'json_schema', name: 'x', schema: {} } } }, 'text.format'],
    [{ ...ok, truncation: 'auto' }, 'truncation'],
    [{ ...ok, max_output_tokens: 0 }, 'max_output_tokens'],
    [{ ...ok, max_output_tokens: 'many' }, 'max_output_tokens'],
    [{ ...ok, temperature: 3 }, 'temperature'],
    [{ ...ok, store: 'yes' }, 'store'],
    [{ ...ok, metadata: { n: 1 } }, 'metadata.n'],
    // Longer than the context: the check every chat route shares names the conversation `messages`.
    [{ ...ok, input: 'word '.repeat(600) }, 'messages'],
  ];
  for (const [body, param] of cases) {
    await assert.rejects(client.responses.create(body), (e) => {
      assert.equal(e.status, 400, `${JSON.stringify(body).slice(0, 100)}: ${e.message}`);
      assert.equal(e.param, param, e.message);
      assert.equal(e.error.type, 'invalid_request_error');
      return true;
    });
  }
  await assert.rejects(client.responses.create({ ...ok, model: 'gpt-5' }), (e) => e.status === 404 && e.param === 'model');
  await assert.rejects(client.responses.retrieve('resp_x', { stream: true }), (e) => e.status === 400 && e.param === 'stream');
  const r = await fetch(`${server.url}/v1/responses`, { method: 'PUT' });
  assert.equal(r.status, 405);
  assert.equal((await client.responses.create(ok)).object, 'response');
});

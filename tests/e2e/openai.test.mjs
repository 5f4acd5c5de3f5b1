// The official OpenAI client against `parley serve` with the bundled model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

let server;
let client;
const messages = [{ role: 'user', content: 'Tell me a story about a cat.' }];

before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0);
});

test('chat completion has OpenAI\'s shape', async () => {
  const r = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 20, temperature: 0 });
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, 'stories260K');
  assert.equal(typeof r.created, 'number');
  assert.equal(typeof r.system_fingerprint, 'string');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.choices[0].message.content.length > 0);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 20);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
});

test('streamed chat equals the complete answer, with role first and usage last', async () => {
  const params = { model: 'stories260K', messages, max_tokens: 40, temperature: 0 };
  const whole = await client.chat.completions.create(params);
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const text = chunks.flatMap((c) => c.choices).map((c) => c.delta.content ?? '').join('');
  assert.equal(text, whole.choices[0].message.content);
  const finish = chunks.flatMap((c) => c.choices).filter((c) => c.finish_reason);
  assert.deepEqual(finish.map((c) => c.finish_reason), [whole.choices[0].finish_reason]);
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.deepEqual(last.usage, whole.usage);
  assert.ok(chunks.length > 5, 'tokens arrive as separate chunks');
  assert.ok(chunks.every((c) => c.id === chunks[0].id));
});

test('completions: greedy text, echo, prompt arrays, streaming', async () => {
  const base = { model: 'stories260K', prompt: 'Once upon a time', max_tokens: 24, temperature: 0 };
  const r = await client.completions.create(base);
  assert.equal(r.object, 'text_completion');
  const text = r.choices[0].text;
  assert.ok(text.length > 0);
  const echoed = await client.completions.create({ ...base, echo: true });
  assert.equal(echoed.choices[0].text, 'Once upon a time' + text);
  const two = await client.completions.create({ ...base, prompt: ['Once upon a time', 'Lily'] });
  assert.equal(two.choices.length, 2);
  assert.equal(two.choices[0].text, text);
  assert.ok(two.usage.prompt_tokens > r.usage.prompt_tokens, 'both prompts count');
  const stream = await client.completions.create({ ...base, stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
  assert.equal(streamed, text);
});

test('n > 1 with a seed: choice i is the single answer with seed + i', async () => {
  const base = { model: 'stories260K', messages, max_tokens: 30, temperature: 1.0, seed: 1234 };
  const many = await client.chat.completions.create({ ...base, n: 3 });
  assert.deepEqual(many.choices.map((c) => c.index), [0, 1, 2]);
  const again = await client.chat.completions.create({ ...base, n: 3 });
  assert.deepEqual(again.choices.map((c) => c.message.content), many.choices.map((c) => c.message.content));
  for (let i = 0; i < 3; i++) {
    const one = await client.chat.completions.create({ ...base, seed: 1234 + i });
    assert.equal(one.choices[0].message.content, many.choices[i].message.content);
  }
  assert.ok(new Set(many.choices.map((c) => c.message.content)).size > 1, 'sampled choices differ');
  assert.equal(many.usage.prompt_tokens, (await client.chat.completions.create(base)).usage.prompt_tokens);
});

test('streamed n > 1 keeps choices apart', async () => {
  const base = { model: 'stories260K', messages, max_tokens: 20, temperature: 0.8, seed: 7, n: 2 };
  const whole = await client.chat.completions.create(base);
  const stream = await client.chat.completions.create({ ...base, stream: true });
  const texts = ['', ''];
  for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.delta.content ?? '';
  assert.deepEqual(texts, whole.choices.map((c) => c.message.content));
});

test('stop strings end the answer before them, never in part', async () => {
  const base = { model: 'stories260K', prompt: 'Once upon a time', max_tokens: 40, temperature: 0 };
  const full = (await client.completions.create(base)).choices[0].text;
  const words = full.trim().split(' ');
  const stop = ' ' + words[3];
  const cut = full.indexOf(stop);
  assert.ok(cut > 0);
  const r = await client.completions.create({ ...base, stop: [stop, 'zzzz'] });
  assert.equal(r.choices[0].text, full.slice(0, cut));
  assert.equal(r.choices[0].finish_reason, 'stop');
  const stream = await client.completions.create({ ...base, stop, stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
  assert.equal(streamed, full.slice(0, cut));
});

test('logprobs: the chosen token and the top alternatives', async () => {
  const r = await client.chat.completions.create({
    model: 'stories260K', messages, max_tokens: 5, temperature: 0, logprobs: true, top_logprobs: 3,
  });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, r.usage.completion_tokens);
  for (const t of content) {
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 3);
    assert.equal(t.top_logprobs[0].logprob, t.logprob, 'greedy picks the most likely token');
  }
  assert.equal(content.map((t) => t.token).join(''), r.choices[0].message.content);
});

test('models: list, retrieve, unknown', async () => {
  const list = await client.models.list();
  assert.deepEqual(list.data.map((m) => m.id), ['stories260K']);
  const m = await client.models.retrieve('stories260K');
  assert.equal(m.object, 'model');
  assert.equal(m.max_model_len, 512, 'the bundled model\'s context, as trained');
  assert.equal(list.data[0].max_model_len, 512);
  await assert.rejects(client.models.retrieve('gpt-4'), (e) => e.status === 404);
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4', messages }),
    (e) => e.status === 404 && e.code === 'model_not_found');
});

test('ignore_eos runs to max_tokens; parameters are accepted', async () => {
  const r = await client.chat.completions.create({
    model: 'stories260K', messages, max_completion_tokens: 60, ignore_eos: true, temperature: 0.7, top_p: 0.9,
    top_k: 40, min_p: 0.05, presence_penalty: 0.5, frequency_penalty: 0.5, logit_bias: { 13: -5 }, user: 'e2e',
    seed: 3,
  });
  assert.equal(r.usage.completion_tokens, 60);
  assert.equal(r.choices[0].finish_reason, 'length');
});

test('truncate_prompt_tokens keeps the prompt\'s last N tokens instead of refusing it', async () => {
  const long = 'Once upon a time there was a dog. '.repeat(80);  // well past the 512-token context
  await assert.rejects(client.completions.create({ prompt: long, max_tokens: 4 }),
    (e) => e.status === 400 && e.code === 'context_length_exceeded');
  const r = await client.completions.create({ prompt: long, max_tokens: 4, temperature: 0, truncate_prompt_tokens: 100 });
  assert.equal(r.usage.prompt_tokens, 100);
  const tail = await client.completions.create({ prompt: 'a dog. Once upon a time', max_tokens: 4, temperature: 0, truncate_prompt_tokens: 3 });
  assert.equal(tail.usage.prompt_tokens, 3);
  const chat = await client.chat.completions.create({ messages: [{ role: 'user', content: long }], max_tokens: 4,
    truncate_prompt_tokens: 64 });
  assert.equal(chat.usage.prompt_tokens, 64);
  await assert.rejects(client.completions.create({ prompt: 'x', truncate_prompt_tokens: 513 }),
    (e) => e.status === 400 && e.param === 'truncate_prompt_tokens');
});

test('completions take an array of token-id arrays: one prompt each', async () => {
  const r = await client.completions.create({ prompt: [[1, 403, 407], [1, 403]], max_tokens: 2, temperature: 0 });
  assert.equal(r.choices.length, 2);
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
  assert.equal(r.usage.prompt_tokens, 5);
  await assert.rejects(client.completions.create({ prompt: [[1, 403], 'text'], max_tokens: 2 }),
    (e) => e.status === 400 && e.param === 'prompt');
});

test('fields the server does not take are refused by name, never silently dropped', async () => {
  await assert.rejects(client.chat.completions.create({ messages, max_tokens: 2, temprature: 0.5 }),
    (e) => e.status === 400 && e.param === 'temprature' && e.code === 'unknown_parameter');
  await assert.rejects(client.chat.completions.create({ messages, max_tokens: 2, audio: { voice: 'alloy', format: 'mp3' } }),
    (e) => e.status === 400 && e.param === 'audio' && e.code === 'unsupported_parameter');
  await assert.rejects(client.chat.completions.create({ messages: [{ role: 'assistant', content: 'Hi', refusal: 'no' }], max_tokens: 2 }),
    (e) => e.status === 400 && e.param === 'messages[0].refusal');
  const plain = await client.chat.completions.create({ messages, max_tokens: 2, tools: [], tool_choice: 'none',
    response_format: { type: 'text' } });
  assert.equal(plain.choices.length, 1);
});

// Structured output through the official OpenAI client: response_format
// json_object / json_schema and GBNF grammars hold whatever the model is
// (the bundled 260K-parameter story model knows no JSON at all).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { startServer } from './server.mjs';

let server;
let client;
const messages = [{ role: 'user', content: 'Describe a person as JSON.' }];

const person = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    pets: { type: 'array', items: { enum: ['cat', 'dog', 'fish'] }, maxItems: 3 },
    alive: { type: 'boolean' },
    nickname: { type: ['string', 'null'], maxLength: 8 },
  },
  required: ['name', 'age', 'pets', 'alive'],
  additionalProperties: false,
};

before(async () => {
  server = await startServer(['--max-running', '16']);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0);
});

test('json_schema: 100 sampled answers out of 100 validate against the schema', async () => {
  const validate = new Ajv({ strict: true }).compile(person);
  const format = { type: 'json_schema', json_schema: { name: 'person', schema: person, strict: true } };
  const answers = await Promise.all(Array.from({ length: 100 }, (_, seed) =>
    client.chat.completions.create({ model: 'stories260K', messages, response_format: format, temperature: 1, seed, max_tokens: 300 })));
  for (const r of answers) {
    const { content } = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'stop', content);
    const value = JSON.parse(content);
    assert.ok(validate(value), `${content}: ${JSON.stringify(validate.errors)}`);
  }
  assert.ok(new Set(answers.map((r) => r.choices[0].message.content)).size > 50, 'the seeds give different answers');
});

test('json_schema streamed: the deltas join to a valid document', async () => {
  const validate = new Ajv().compile(person);
  const stream = await client.chat.completions.create({
    model: 'stories260K', messages, stream: true, temperature: 0.8, seed: 7, max_tokens: 300,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema: person } },
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.ok(validate(JSON.parse(text)), text);
});

// The story model fills strings with stories: most answers run to max_tokens
// inside a string. Those that end must be objects; all start as one.
test('json_object: an object from the first character, and answers that end parse', async () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const r = await client.chat.completions.create({
      model: 'stories260K', messages, response_format: { type: 'json_object' }, temperature: 0.7, seed, max_tokens: 100,
      logprobs: true, top_logprobs: 2,
    });
    const { content } = r.choices[0].message;
    assert.match(content, /^\{/);
    // Log-probabilities describe the constrained distribution: the chosen token is always possible.
    for (const t of r.choices[0].logprobs.content) assert.ok(Number.isFinite(t.logprob));
    if (r.choices[0].finish_reason !== 'stop') continue;  // a string may run past max_tokens
    const value = JSON.parse(content);
    assert.equal(typeof value, 'object');
    assert.ok(value !== null && !Array.isArray(value), content);
  }
});

test('a GBNF grammar constrains completions and chat alike, with n > 1', async () => {
  const grammar = 'root ::= "The answer is " ("yes" | "no") "."';
  const c = await client.completions.create({ model: 'stories260K', prompt: 'Once', grammar, n: 3, temperature: 1, seed: 3, max_tokens: 50 });
  for (const choice of c.choices) {
    assert.match(choice.text, /^The answer is (yes|no)\.$/);
    assert.equal(choice.finish_reason, 'stop');
  }
  const r = await client.chat.completions.create({ model: 'stories260K', messages, grammar, temperature: 0, max_tokens: 50 });
  assert.match(r.choices[0].message.content, /^The answer is (yes|no)\.$/);
});

test('the same schema twice is an answer from the response cache only when it is the same schema', async () => {
  const a = { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object', properties: { x: { type: 'boolean' } }, required: ['x'], additionalProperties: false } } };
  const b = { type: 'json_schema', json_schema: { name: 'b', schema: { type: 'object', properties: { y: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['y'], additionalProperties: false } } };
  const ra = await client.chat.completions.create({ model: 'stories260K', messages, response_format: a, temperature: 0, max_tokens: 40 });
  const rb = await client.chat.completions.create({ model: 'stories260K', messages, response_format: b, temperature: 0, max_tokens: 40 });
  assert.deepEqual(Object.keys(JSON.parse(ra.choices[0].message.content)), ['x']);
  assert.deepEqual(Object.keys(JSON.parse(rb.choices[0].message.content)), ['y']);
});

test('bad formats and grammars are 400s naming the field, fast', async () => {
  const bad = async (extra, param) => {
    const started = Date.now();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stories260K', messages, max_tokens: 5, ...extra }),
    });
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.param, param, JSON.stringify(body));
    assert.ok(Date.now() - started < 2000, 'refused quickly');
    return body.error.message;
  };
  const schema = (s) => ({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: s } } });
  assert.match(await bad(schema({ type: 'string', pattern: '^a+$' }), 'response_format.json_schema.schema'), /pattern/);
  assert.match(await bad(schema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }), 'response_format.json_schema.schema'), /missing|ref/i);
  await bad(schema({ type: 'array', items: { type: 'integer' }, minItems: 1000000 }), 'response_format.json_schema.schema');
  await bad({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name');
  await bad({ response_format: { type: 'yaml' } }, 'response_format.type');
  await bad({ response_format: { type: 'json_object', extra: 1 } }, 'response_format.extra');
  assert.match(await bad({ grammar: 'root ::= foo' }, 'grammar'), /foo/);
  assert.match(await bad({ grammar: 'root ::= root "a"' }, 'grammar'), /recurs|match/i);
  await bad({ grammar: 'root ::= "a" (' }, 'grammar');
  await bad({ grammar: 'root ::= "a"', response_format: { type: 'json_object' } }, 'grammar');
});

test('the WebSocket API and /chat take response_format too', async () => {
  const r = await fetch(`${server.url}/chat`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompts: ['Hi', 'Bye'], max_tokens: 300, temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'p', schema: person } } }),
  });
  assert.equal(r.status, 200);
  const validate = new Ajv().compile(person);
  for (const text of (await r.json()).results) assert.ok(validate(JSON.parse(text)), text);

  const { WebSocket } = await import('ws');
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const text = await new Promise((resolve, reject) => {
    let acc = '';
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.error) return reject(new Error(JSON.stringify(m.error)));
      if (m.finished) resolve(acc); else acc += m.text;
    });
    ws.send(JSON.stringify({ messages, max_tokens: 300, temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'p', schema: person } } }));
  });
  // A plain prompt takes no template arguments: refused, not ignored.
  const refused = await new Promise((resolve) => {
    ws.removeAllListeners('message');
    ws.on('message', (data) => { const m = JSON.parse(data.toString()); if (m.error || m.finished) resolve(m); });
    ws.send(JSON.stringify({ prompt: 'Once', max_tokens: 3, chat_template_kwargs: { enable_thinking: false } }));
  });
  assert.equal(refused.error?.param, 'chat_template_kwargs', JSON.stringify(refused));
  ws.close();
  assert.ok(validate(JSON.parse(text)), text);
});

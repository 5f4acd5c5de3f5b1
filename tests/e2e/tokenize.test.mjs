// POST /tokenize, /detokenize and /apply-template against `parley serve` with
// the bundled model, in llama-server's and vLLM's request shapes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './server.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => assert.equal((await server.stop()).code, 0));

async function post(path, body) {
  const r = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

test('llama-server shape: content in, ids (or ids with pieces) out; detokenize gives the text back', async () => {
  const plain = await post('/tokenize', { content: 'Once upon a time' });
  assert.equal(plain.status, 200);
  assert.deepEqual(plain.body.tokens, [403, 407, 261, 378]);  // as the golden prompt, without BOS
  const bos = await post('/tokenize', { content: 'Once upon a time', add_special: true });
  assert.deepEqual(bos.body.tokens, [1, 403, 407, 261, 378]);
  const pieces = await post('/tokenize', { content: 'Once upon a time', with_pieces: true });
  assert.deepEqual(pieces.body.tokens.map((t) => t.id), plain.body.tokens);
  assert.equal(pieces.body.tokens.map((t) => t.piece).join(''), ' Once upon a time');
  const back = await post('/detokenize', { tokens: bos.body.tokens });
  assert.equal(back.status, 200);
  assert.equal(back.body.content, 'Once upon a time');
  assert.equal(back.body.prompt, back.body.content);
  // Special-token text: parsed by default (as llama-server), plain text when asked.
  assert.deepEqual((await post('/tokenize', { content: '</s>' })).body.tokens, [2]);
  assert.ok((await post('/tokenize', { content: '</s>', parse_special: false })).body.tokens.length > 1);
});

test('vLLM shape: prompt or messages in, count, max_model_len and ids out', async () => {
  const p = await post('/tokenize', { prompt: 'Once upon a time', return_token_strs: true });
  assert.equal(p.status, 200);
  assert.deepEqual(p.body, { count: 5, max_model_len: 512, tokens: [1, 403, 407, 261, 378],
    token_strs: ['<s>', ' Once', ' upon', ' a', ' time'] });
  const noBos = await post('/tokenize', { prompt: 'Once upon a time', add_special_tokens: false });
  assert.deepEqual(noBos.body.tokens, [403, 407, 261, 378]);
  // Messages: the exact prompt a chat request runs (its usage counts the same tokens).
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Tell me a story.' }];
  const m = await post('/tokenize', { messages });
  assert.equal(m.status, 200);
  const chat = await post('/v1/chat/completions', { messages, max_tokens: 1 });
  assert.equal(m.body.count, chat.body.usage.prompt_tokens);
});

test('bad input is a 400 naming the field', async () => {
  const cases = [
    ['/tokenize', {}, 'prompt'], ['/tokenize', { content: 5 }, 'content'], ['/tokenize', { content: 'x', foo: 1 }, 'foo'],
    ['/tokenize', { prompt: 'x', with_pieces: true }, 'with_pieces'], ['/tokenize', { messages: 'x' }, 'messages'],
    ['/tokenize', { messages: [{ role: 'user', content: 'x' }], add_generation_prompt: false }, 'add_generation_prompt'],
    ['/detokenize', {}, 'tokens'], ['/detokenize', { tokens: [1, 99999] }, 'tokens'], ['/detokenize', { tokens: ['a'] }, 'tokens'],
    ['/detokenize', { tokens: [1], extra: true }, 'extra'],
  ];
  for (const [path, body, param] of cases) {
    const r = await post(path, body);
    assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.param, param, JSON.stringify(r.body));
  }
  assert.equal((await post('/tokenize', { prompt: 'x', model: 'other' })).status, 404);
});

test('/apply-template gives the prompt text a chat runs; --chat-template replaces the model\'s template', async () => {
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }];
  const plain = await post('/apply-template', { messages });
  assert.equal(plain.status, 200);
  assert.equal(plain.body.prompt, 'System: Be brief.\nUser: Hi\nAssistant:');  // no template: the plain format
  assert.equal((await post('/apply-template', { messages, add_generation_prompt: false })).body.prompt,
    'System: Be brief.\nUser: Hi\n');
  assert.equal((await post('/apply-template', { messages, tools: [] })).status, 400);

  const dir = mkdtempSync(join(tmpdir(), 'parley-template-'));
  const file = join(dir, 't.jinja');
  writeFileSync(file, '{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}'
    + '{% if add_generation_prompt %}<assistant>{% endif %}');
  const custom = await startServer(['--chat-template', file]);
  try {
    const r = await fetch(`${custom.url}/apply-template`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages }) });
    assert.equal((await r.json()).prompt, '<system>Be brief.</system><user>Hi</user><assistant>');
    const chat = await fetch(`${custom.url}/v1/chat/completions`, { method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 2 }) });
    assert.equal(chat.status, 200);
    const tokens = await fetch(`${custom.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages }) });
    assert.equal((await tokens.json()).count, (await chat.json()).usage.prompt_tokens);
  } finally {
    assert.equal((await custom.stop()).code, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

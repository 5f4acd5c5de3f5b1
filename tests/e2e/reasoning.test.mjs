// Reasoning models: on a model with Qwen3's template, text inside
// <think>...</think> is message.reasoning_content (delta.reasoning_content
// when streamed), not content; chat_template_kwargs reach the template. A
// grammar makes the random-weights model write a thinking block.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startServer, binary } from './server.mjs';

let dir;
let server;
let client;
const messages = [{ role: 'user', content: 'Is the sky blue?' }];
const grammar = 'root ::= "<think>\\n" [a-z ]{3,30} "\\n</think>\\n\\n" ("yes" | "no") [a-z ]{0,20}';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-reasoning-'));
  const model = join(dir, 'qwen3.gguf');
  execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '2', '--heads', '4', '--ctx', '4096',
    '--chat-template', 'qwen3', '-o', model], { stdio: 'ignore' });
  server = await startServer(['-m', model]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

test('thinking goes to reasoning_content, the answer to content, streamed alike', async () => {
  const params = { model: 'qwen3', messages, grammar, temperature: 1, seed: 2, max_tokens: 100 };
  const r = await client.chat.completions.create(params);
  const m = r.choices[0].message;
  assert.match(m.reasoning_content, /^[a-z ]{3,30}$/);
  assert.match(m.content, /^(yes|no)[a-z ]*$/);
  assert.ok(!m.content.includes('think'));

  const stream = await client.chat.completions.create({ ...params, stream: true });
  let reasoning = '';
  let content = '';
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta ?? {};
    reasoning += d.reasoning_content ?? '';
    content += d.content ?? '';
  }
  assert.equal(reasoning, m.reasoning_content);
  assert.equal(content, m.content);
});

test('chat_template_kwargs reach the template (enable_thinking false writes an empty thinking block)', async () => {
  const on = await client.chat.completions.create({ model: 'qwen3', messages, max_tokens: 1 });
  const off = await client.chat.completions.create({ model: 'qwen3', messages, max_tokens: 1,
    chat_template_kwargs: { enable_thinking: false } });
  assert.ok(off.usage.prompt_tokens > on.usage.prompt_tokens, `${off.usage.prompt_tokens} vs ${on.usage.prompt_tokens}`);
  const bad = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages, max_tokens: 1, chat_template_kwargs: 'no' }) });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.param, 'chat_template_kwargs');
});

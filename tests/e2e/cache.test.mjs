// The response cache (deterministic requests answered again from the cache,
// byte-identical, streamed or not, over HTTP and WebSocket) and static answers
// (matched after normalisation, reloaded by the admin endpoint and SIGHUP).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServer, sleep, stats } from './server.mjs';

const ADMIN_KEY = 'cache-admin-key';
const adminAuth = { authorization: `Bearer ${ADMIN_KEY}` };
let server;
let dir;
let answersFile;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-cache-'));
  answersFile = join(dir, 'answers.json');
  writeAnswers([{ questions: ['What is Parley?', 'Who made you?'], answer: 'Parley is a CPU inference server.' }]);
  server = await startServer(['--static-answers', answersFile, '--static-answers-mode', 'always', '--admin-key', ADMIN_KEY]);
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

function writeAnswers(answers) {
  writeFileSync(answersFile, JSON.stringify({ answers }));
}

let counter = 0;
// A prompt no other test uses, so that the first request is a miss.
const fresh = () => [{ role: 'user', content: `Tell me a story about cat number ${++counter} ${Date.now()}.` }];

const chat = (body) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ max_tokens: 40, ...body }),
  });

async function chatJson(body) {
  const r = await chat(body);
  assert.equal(r.status, 200);
  return { cache: r.headers.get('x-parley-cache'), isStatic: r.headers.get('x-parley-static'), body: await r.json() };
}

// The streamed pieces of content, in order.
async function chatStream(body) {
  const r = await chat({ ...body, stream: true });
  assert.equal(r.status, 200);
  const events = (await r.text()).split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  return {
    cache: r.headers.get('x-parley-cache'),
    isStatic: r.headers.get('x-parley-static'),
    pieces: chunks.map((c) => c.choices[0]?.delta?.content ?? ''),
    finish: chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean),
  };
}

test('a greedy request misses, then hits with the byte-identical answer, streamed or not', async () => {
  const messages = fresh();
  const before = await stats(server.url);
  const miss = await chatJson({ messages, temperature: 0 });
  assert.equal(miss.cache, 'miss');
  const hit = await chatJson({ messages, temperature: 0 });
  assert.equal(hit.cache, 'hit');
  assert.equal(hit.body.choices[0].message.content, miss.body.choices[0].message.content);
  assert.equal(hit.body.choices[0].finish_reason, miss.body.choices[0].finish_reason);
  assert.deepEqual(hit.body.usage, miss.body.usage);
  assert.notEqual(hit.body.id, miss.body.id);
  const streamed = await chatStream({ messages, temperature: 0 });
  assert.equal(streamed.cache, 'hit');
  assert.equal(streamed.pieces.join(''), miss.body.choices[0].message.content);
  const after = await stats(server.url);
  assert.equal(after.response_cache_hits - before.response_cache_hits, 2);
  assert.equal(after.response_cache_misses - before.response_cache_misses, 1);
  assert.ok(after.response_cache_bytes > 0);
});

test('a streamed miss and its streamed hit send the same chunks', async () => {
  const messages = fresh();
  const miss = await chatStream({ messages, temperature: 0, logprobs: true, top_logprobs: 2 });
  const hit = await chatStream({ messages, temperature: 0, logprobs: true, top_logprobs: 2 });
  assert.equal(miss.cache, 'miss');
  assert.equal(hit.cache, 'hit');
  assert.deepEqual(hit.pieces, miss.pieces);
  assert.deepEqual(hit.finish, miss.finish);
});

test('every output-changing parameter is in the key', async () => {
  const messages = fresh();
  assert.equal((await chatJson({ messages, temperature: 0 })).cache, 'miss');
  for (const change of [{ max_tokens: 41 }, { stop: ['.'] }, { presence_penalty: 0.5 }, { logit_bias: { 5: 3 } }, { n: 2 }])
    assert.equal((await chatJson({ messages, temperature: 0, ...change })).cache, 'miss', JSON.stringify(change));
  assert.equal((await chatJson({ messages, temperature: 0 })).cache, 'hit');
});

test('seeded sampling is cached per seed; unseeded sampling and "cache": false never are', async () => {
  const messages = fresh();
  assert.equal((await chatJson({ messages, temperature: 0.9, seed: 7 })).cache, 'miss');
  const again = await chatJson({ messages, temperature: 0.9, seed: 7 });
  assert.equal(again.cache, 'hit');
  assert.equal((await chatJson({ messages, temperature: 0.9, seed: 8 })).cache, 'miss');
  const before = await stats(server.url);
  for (let i = 0; i < 2; ++i) {
    assert.equal((await chatJson({ messages, temperature: 0.9 })).cache, null);
    assert.equal((await chatJson({ messages, temperature: 0.9, seed: 7, cache: false })).cache, null);
  }
  const after = await stats(server.url);
  assert.equal(after.response_cache_hits, before.response_cache_hits);
  assert.equal(after.response_cache_misses, before.response_cache_misses);
});

test('completions are cached too', async () => {
  const body = { prompt: `Once upon a time ${Date.now()}`, max_tokens: 20, temperature: 0 };
  const post = () => fetch(`${server.url}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const a = await post();
  const b = await post();
  assert.equal(a.headers.get('x-parley-cache'), 'miss');
  assert.equal(b.headers.get('x-parley-cache'), 'hit');
  assert.equal((await b.json()).choices[0].text, (await a.json()).choices[0].text);
});

test('WebSocket answers say miss, then hit, with the same text', async () => {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const queue = [];
  let wake = null;
  ws.on('message', (d) => { queue.push(JSON.parse(d.toString())); if (wake) wake(); });
  const answer = async (request) => {
    ws.send(JSON.stringify(request));
    let text = '';
    for (;;) {
      while (!queue.length) await new Promise((r) => { wake = r; });
      const m = queue.shift();
      if (m.finished || m.error) return { text, end: m };
      text += m.text;
    }
  };
  const request = { messages: fresh(), max_tokens: 30, temperature: 0 };
  const miss = await answer(request);
  const hit = await answer(request);
  ws.close();
  assert.equal(miss.end.cache, 'miss');
  assert.equal(hit.end.cache, 'hit');
  assert.equal(hit.text, miss.text);
  assert.deepEqual(hit.end.usage, miss.end.usage);
});

test('session turns go through the cache and are stored on a hit', async () => {
  const content = 'Tell me a story.';
  const system = `Sys ${Date.now()}-${++counter}`;
  const ids = [];
  for (let i = 0; i < 2; ++i) {
    const r = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ system_prompt: system }) });
    ids.push((await r.json()).id);
  }
  const a = await chatJson({ session_id: ids[0], messages: [{ role: 'user', content }], temperature: 0 });
  const b = await chatJson({ session_id: ids[1], messages: [{ role: 'user', content }], temperature: 0 });
  assert.equal(a.cache, 'miss');
  assert.equal(b.cache, 'hit');
  const turns = (await (await fetch(`${server.url}/v1/sessions/${ids[1]}`)).json()).turns;
  assert.deepEqual(turns.map((t) => [t.user, t.assistant]), [[content, a.body.choices[0].message.content]]);
});

test('static answers match after normalisation, stream, and reload by endpoint and SIGHUP', async () => {
  const r = await chatJson({ messages: [{ role: 'user', content: '  what IS parley??' }], temperature: 0.8 });
  assert.equal(r.isStatic, '1');
  assert.equal(r.body.choices[0].message.content, 'Parley is a CPU inference server.');
  assert.equal(r.body.choices[0].finish_reason, 'stop');
  const s = await chatStream({ messages: [{ role: 'user', content: 'Who made you' }] });
  assert.equal(s.isStatic, '1');
  assert.equal(s.pieces.join(''), 'Parley is a CPU inference server.');
  assert.deepEqual(s.finish, ['stop']);
  assert.equal((await chatJson({ messages: fresh(), temperature: 0 })).isStatic, null);

  writeAnswers([{ questions: ['Where are you?'], answer: 'On a CPU.' }, { questions: ['What is Parley?'], answer: 'Version two.' }]);
  const reload = await fetch(`${server.url}/admin/static-answers/reload`, { method: 'POST', headers: adminAuth });
  assert.equal(reload.status, 200);
  assert.deepEqual(await reload.json(), { reloaded: true, answers: 2 });
  assert.equal((await chatJson({ messages: [{ role: 'user', content: 'where are you' }] })).body.choices[0].message.content, 'On a CPU.');

  writeFileSync(answersFile, '{"answers": [');  // broken: the old table stays
  const bad = await fetch(`${server.url}/admin/static-answers/reload`, { method: 'POST', headers: adminAuth });
  assert.equal(bad.status, 400);
  assert.equal((await chatJson({ messages: [{ role: 'user', content: 'What is Parley?' }] })).body.choices[0].message.content, 'Version two.');

  writeAnswers([{ questions: ['What is Parley?'], answer: 'Reloaded by SIGHUP.' }]);
  server.proc.kill('SIGHUP');
  let content = '';
  for (let i = 0; i < 100 && content !== 'Reloaded by SIGHUP.'; ++i) {
    await sleep(20);
    content = (await chatJson({ messages: [{ role: 'user', content: 'What is Parley?' }] })).body.choices[0].message.content;
  }
  assert.equal(content, 'Reloaded by SIGHUP.');
  assert.ok((await stats(server.url)).static_answers_served >= 5);
});

test('cached answers serve only the API key that caused them, unless --response-cache-scope global', async () => {
  const keys = ['tenant-a-key', 'tenant-b-key'];
  for (const [scope, bHits] of [['key', 'miss'], ['global', 'hit']]) {
    const scoped = await startServer([...keys.flatMap((k) => ['--api-key', k]), '--response-cache-scope', scope]);
    try {
      const ask = async (key) => {
        const r = await fetch(`${scoped.url}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ messages: [{ role: 'user', content: 'Did anyone ask this?' }], max_tokens: 8, temperature: 0 }),
        });
        assert.equal(r.status, 200);
        return r.headers.get('x-parley-cache');
      };
      assert.equal(await ask(keys[0]), 'miss', scope);
      assert.equal(await ask(keys[0]), 'hit', scope);
      assert.equal(await ask(keys[1]), bHits, scope);
    } finally {
      await scoped.stop();
    }
  }
});

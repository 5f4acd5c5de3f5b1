// POST /chat, the batch endpoint: prompts run together, answers in input order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stats } from './server.mjs';

let server;
before(async () => { server = await startServer(); });
after(async () => assert.equal((await server.stop()).code, 0));

const prompts = ['Tell me about a dog.', 'Once upon a time', 'Lily liked', 'The sun', 'A big red ball',
  'Tom and Sue', 'The bird sang', 'What is a cat?'];

async function chat(body) {
  const r = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

test('8 prompts: each answer in its place, computed in one batch', async () => {
  const params = { max_tokens: 20, temperature: 0, ignore_eos: true };
  const singles = [];
  const before = (await stats(server.url)).steps;
  for (const p of prompts) {
    const r = await chat({ prompts: [p], ...params });
    assert.equal(r.status, 200);
    singles.push(r.body.results[0]);
  }
  const singleSteps = (await stats(server.url)).steps - before;
  const r = await chat({ prompts, ...params });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results, singles);
  assert.equal(r.body.usage.completion_tokens, 8 * 20);
  const batchSteps = (await stats(server.url)).steps - before - singleSteps;
  assert.ok(batchSteps < singleSteps / 4, `batched: ${batchSteps} steps, one by one: ${singleSteps}`);
  assert.ok(new Set(singles).size > 4, 'different prompts, different answers');
});

test('0 or more than 8 prompts, or non-strings, are 400', async () => {
  for (const body of [{ prompts: [] }, { prompts: [...prompts, 'ninth'] }, { prompts: 'one' }, { prompts: [1] }, {}]) {
    const r = await chat(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.param, 'prompts');
  }
  assert.equal((await chat({ prompts: ['a'], n: 2 })).status, 400);
});

// Every client mistake over raw HTTP: the right status, OpenAI's error JSON,
// never a 500, and the server keeps serving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer } from './server.mjs';

let server;
before(async () => { server = await startServer(['--max-body-bytes', '4096']); });
after(async () => assert.equal((await server.stop()).code, 0));

// Sends raw bytes; resolves with {status, headers, body}.
function raw(bytes) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => socket.end(bytes));
    let data = Buffer.alloc(0);
    socket.on('data', (d) => { data = Buffer.concat([data, d]); });
    socket.on('error', reject);
    socket.on('close', () => {
      const text = data.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split).toLowerCase(),
        body: Buffer.from(text.slice(split + 4), 'latin1').toString() });
    });
  });
}

function post(path, body, contentType = 'application/json') {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return raw(Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
    `Content-Type: ${contentType}\r\nContent-Length: ${payload.length}\r\n\r\n`), payload]));
}

function assertError(r, status, param) {
  assert.equal(r.status, status, r.body);
  const { error } = JSON.parse(r.body);
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.type, 'string');
  assert.ok('param' in error && 'code' in error);
  if (param !== undefined) assert.equal(error.param, param);
}

const chat = (extra) => JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ...extra });

test('400: malformed JSON, wrong types, out-of-range values, invalid UTF-8', async () => {
  assertError(await post('/v1/chat/completions', '{"messages": ['), 400);
  assertError(await post('/v1/chat/completions', '[1, 2]'), 400);
  assertError(await post('/v1/chat/completions', chat({ temperature: -1 })), 400, 'temperature');
  assertError(await post('/v1/chat/completions', chat({ temperature: 'warm' })), 400, 'temperature');
  assertError(await post('/v1/chat/completions', chat({ top_p: 1.5 })), 400, 'top_p');
  assertError(await post('/v1/chat/completions', chat({ top_p: 0 })), 400, 'top_p');
  assertError(await post('/v1/chat/completions', chat({ max_tokens: 0 })), 400, 'max_tokens');
  assertError(await post('/v1/chat/completions', chat({ n: 1000 })), 400, 'n');
  assertError(await post('/v1/chat/completions', chat({ stream: 'yes' })), 400, 'stream');
  assertError(await post('/v1/chat/completions', chat({ stop: [1] })), 400, 'stop');
  assertError(await post('/v1/chat/completions', chat({ logit_bias: { 99999: 1 } })), 400, 'logit_bias');
  assertError(await post('/v1/chat/completions', JSON.stringify({ messages: [] })), 400, 'messages');
  assertError(await post('/v1/chat/completions', JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] })),
    400, 'messages[0].role');
  assertError(await post('/v1/completions', JSON.stringify({ prompt: 'x', suffix: 'y' })), 400, 'suffix');
  assertError(await post('/v1/completions', JSON.stringify({ prompt: 5 })), 400, 'prompt');
  const badUtf8 = Buffer.concat([Buffer.from('{"prompt": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
  assertError(await post('/v1/completions', badUtf8), 400);
});

test('400: a prompt longer than the context', async () => {
  const long = 'Once upon a time '.repeat(200);
  const r = await post('/v1/completions', JSON.stringify({ prompt: long }));
  assertError(r, 400);
  assert.equal(JSON.parse(r.body).error.code, 'context_length_exceeded');
});

test('404 route and model, 405 method, 413 body, 415 content type', async () => {
  assertError(await raw('GET /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 404);
  assertError(await post('/v1/chat/completions', chat({ model: 'nope' })), 404, 'model');
  const r405 = await raw('DELETE /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assertError(r405, 405);
  assert.match(r405.headers, /allow: get/);
  assertError(await post('/v1/chat/completions', chat({ pad: 'x'.repeat(5000) })), 413);
  assertError(await post('/v1/chat/completions', chat(), 'text/plain'), 415);
  assertError(await raw('GARBAGE\r\n\r\n'), 400);
  assertError(await raw('GET /v1/ws HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 426);
});

test('the server is unharmed and no mistake was a 500', async () => {
  const r = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST',
    headers: { 'content-type': 'application/json' }, body: chat() });
  assert.equal(r.status, 200);
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /^parley_http_errors_total \d+$/m);
  assert.match(metrics, /^# TYPE parley_kv_blocks_used gauge$/m);
  assert.ok(!server.stderr().includes('Internal error'));
});

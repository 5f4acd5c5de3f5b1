// A bounded fuzz run over raw sockets (docs/security.md): thousands of random
// and malformed requests — broken JSON, wrong types, huge numbers, deep
// nesting, invalid UTF-8, bad headers, slow and truncated bodies, garbage,
// non-canonical spellings of the API's paths, and Transfer-Encoding variants
// with a second request smuggled behind them. The server has an API key, which
// most cases send. Every answer must be below 500 (or the connection closed,
// for garbage), no other spelling of a path may reach a route, no smuggled
// request may be answered, the server must stay up and report no sanitizer
// error, and a well-formed client running alongside must always succeed.
// PARLEY_FUZZ_REQUESTS and PARLEY_FUZZ_SEED change the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, sleep } from './server.mjs';

const total = Number(process.env.PARLEY_FUZZ_REQUESTS || 2500);
const seed = Number(process.env.PARLEY_FUZZ_SEED || Date.now() % 100000);
const concurrency = 16;
const KEY = 'fuzz-key';
const auth = `Authorization: Bearer ${KEY}\r\n`;

// mulberry32: a small seeded generator, so that a failing run can be repeated.
function rng(s) {
  return () => {
    s = (s + 0x6D2B79F5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(seed);
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const int = (n) => Math.floor(random() * n);

// The routes that generate (the bodies go there), then the others.
const bodyPaths = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/chat', '/v1/messages',
  '/v1/responses'];
const paths = [...bodyPaths, '/v1/models', '/v1/models/x', '/v1/ws', '/health', '/metrics', '/v1/stats', '/', '/nope',
  '/v1/sessions', '/v1/responses/resp_x', '/v1/chat/completions?x=%00', '//..//etc/passwd'];
const methods = ['POST', 'GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'BREW', ''];
const weird = [null, true, false, 0, -1, 1e308, -1e308, 1.5, 99999999999999999999, -99999999999999999999, '',
  'x'.repeat(5000), [], {}, [[]], { a: 1 }, '\u0000', '\ud83d\ude00', 'NaN', [1, 2, 3], -0];
const fields = ['messages', 'prompt', 'prompts', 'max_tokens', 'temperature', 'top_p', 'top_k', 'n', 'stream', 'stop',
  'seed', 'logprobs', 'top_logprobs', 'logit_bias', 'timeout', 'model', 'stream_options', 'max_completion_tokens',
  'presence_penalty', 'frequency_penalty', 'echo', 'suffix', 'best_of', 'user', 'session_id', 'cache',
  // Anthropic's Messages and OpenAI's Responses.
  'system', 'stop_sequences', 'metadata', 'tools', 'input', 'instructions', 'max_output_tokens', 'previous_response_id',
  'store', 'text', 'truncation'];

function validBody() {
  return { messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 4 };
}

function wrongTypes() {
  const body = pick([validBody(), validBody(), { prompt: 'Hello', max_tokens: 3 }, { input: 'Hello', max_output_tokens: 3 }]);
  for (let i = 0, n = 1 + int(3); i < n; i++) body[pick(fields)] = pick(weird);
  if (random() < 0.3) body.messages = [{ role: pick(['user', 'system', 'tool', 'x', 7]), content: pick(weird) }];
  if (random() < 0.2) body.input = [{ role: pick(['user', 'developer', 'x']), content: [{ type: pick(['input_text', 'input_image', 7]), text: pick(weird) }] }];
  return JSON.stringify(body);
}

function deepNesting() {
  const depth = pick([100, 1000, 20000]);
  const open = pick(['[', '{"a":']);
  const close = open === '[' ? ']' : '}';
  return `{"prompt": ${open.repeat(depth)}1${close.repeat(depth)}}`;
}

function invalidUtf8() {
  const bad = Buffer.from([pick([0xff, 0xc0, 0xed, 0xf8, 0x80]), pick([0xa0, 0x80, 0x20]), 0x41]);
  return Buffer.concat([Buffer.from('{"prompt": "ab'), bad, Buffer.from('", "max_tokens": 2}')]);
}

function brokenJson() {
  const text = JSON.stringify(validBody());
  return pick([text.slice(0, int(text.length)), text.replace(':', ''), `${text}}`, `{"prompt": "a", }`,
    `{'prompt': 'a'}`, `{"prompt": "\\u12"}`, `{"prompt": 1e99999}`, `[${text}]`, 'null', '"str"', '']);
}

function hugeNumbers() {
  return `{"prompt": "a", "${pick(['max_tokens', 'temperature', 'n', 'seed', 'top_k', 'timeout'])}": ` +
    `${pick(['1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000001', '-0', '1E+308'])}}`;
}

// Most requests carry the key: the others stop at the key check (401).
function request(method, path, body, extraHeaders = random() < 0.85 ? auth : '') {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body ?? '');
  return Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n${extraHeaders}\r\n`), payload]);
}

// Another spelling of an API path (it must name no route, key or not).
function pathVariant() {
  const path = pick(['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/chat', '/v1/models', '/v1/sessions',
    '/v1/messages', '/v1/responses', '/admin/static-answers/reload']);
  const slash = [...path].map((c, i) => (c === '/' ? i : -1)).filter((i) => i >= 0);
  const at = pick(slash);
  return pick([`/${path}`, `${path}/`, `${path.slice(0, at)}/${path.slice(at)}`, `${path.slice(0, at)}/.${path.slice(at)}`,
    `${path.slice(0, at)}/x/..${path.slice(at)}`, at > 0 ? `${path.slice(0, at)}%2F${path.slice(at + 1)}` : `/%2E${path}`,
    path.toUpperCase(), `${path}/.`, `${path}//`]);
}

// A body framed by a Transfer-Encoding other than exactly "chunked", with a
// whole request behind it that a lenient parser would run next.
function smuggle() {
  const te = pick(['chunked, identity', 'xchunked', 'gzip, chunked', 'identity', 'chunked\r\nTransfer-Encoding: chunked',
    'chunked\r\nContent-Length: 3', ' chunked , chunked', 'chunked;q=1', 'CHUNKED\u000b']);
  return Buffer.from(`POST ${pick(bodyPaths)} HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: ${te}\r\n\r\n` +
    `GET /v1/models HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 'latin1');
}

function badHeaders(body) {
  const lines = pick(['Content-Length: abc\r\n', 'Content-Length: -5\r\n', 'Content-Length: 5\r\nContent-Length: 7\r\n',
    'Transfer-Encoding: chunked\r\n', 'No colon here\r\n', ' leading: space\r\n', `X-Big: ${'a'.repeat(20000)}\r\n`,
    'Authorization: Bearer \u0001\r\n', 'X-Request-Id: \u00ff\u00fe\r\n', 'Expect: 100-continue\r\n',
    'Content-Type: text/plain\r\n']);
  const payload = Buffer.from(body);
  return Buffer.concat([Buffer.from(`POST ${pick(paths)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${lines}` +
    `Content-Length: ${payload.length}\r\n\r\n`), payload]);
}

function garbage() {
  const n = 1 + int(300);
  const bytes = Buffer.alloc(n);
  for (let i = 0; i < n; i++) bytes[i] = int(256);
  return pick([bytes, Buffer.concat([Buffer.from('GET / HTTP/9.9\r\n'), bytes]), Buffer.from('\r\n\r\n'),
    Buffer.from(`${pick(methods)} ${'/'.repeat(int(5000))} HTTP/1.1\r\n\r\n`)]);
}

// One fuzz case: the bytes to send, how (at once, slowly, truncated), and
// whether the server may close without answering.
function fuzzCase() {
  const kind = pick(['types', 'types', 'nesting', 'utf8', 'json', 'json', 'numbers', 'headers', 'garbage', 'slow', 'truncated',
    'method', 'path', 'smuggle']);
  const path = pick(bodyPaths);
  switch (kind) {
    case 'types': return { kind, bytes: request('POST', path, wrongTypes()) };
    case 'nesting': return { kind, bytes: request('POST', path, deepNesting()) };
    case 'utf8': return { kind, bytes: request('POST', path, invalidUtf8()) };
    case 'json': return { kind, bytes: request('POST', path, brokenJson()) };
    case 'numbers': return { kind, bytes: request('POST', path, hugeNumbers()) };
    case 'headers': return { kind, bytes: badHeaders(wrongTypes()), mayClose: true };
    case 'garbage': return { kind, bytes: garbage(), mayClose: true };
    case 'method': return { kind, bytes: request(pick(methods) || 'GET', pick(paths), random() < 0.5 ? wrongTypes() : '') , mayClose: true };
    case 'slow': return { kind, bytes: request('POST', path, wrongTypes()), slow: true };
    case 'path': return { kind, bytes: request(pick(['GET', 'POST']), pathVariant(), JSON.stringify(validBody()), pick(['', auth])),
      expect: (r) => r.status === 404 };
    case 'smuggle': return { kind, bytes: smuggle(), expect: (r) => r.status === 400 && r.responses === 1 };
    default: return { kind, bytes: request('POST', path, wrongTypes()), truncate: true, mayClose: true };
  }
}

// Sends one case; resolves with {status (0 when the server closed without
// one), responses (how many status lines came back), body (of the first)}.
function send(port, c) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => socket.destroy(), 15000);
    socket.on('data', (d) => { data += d.toString('latin1'); });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const status = data.startsWith('HTTP/1.1 ') ? Number(data.slice(9, 12)) : 0;
      const responses = (data.match(/HTTP\/1\.1 \d{3} /g) || []).length;
      resolve({ status, responses, body: Buffer.from(data.slice(data.indexOf('\r\n\r\n') + 4), 'latin1').toString() });
    });
    socket.on('connect', async () => {
      // No half-close after a whole request: the server takes EOF while it
      // works as the client leaving (and cancels). Truncated bodies end early.
      if (c.truncate) {
        socket.end(c.bytes.subarray(0, Math.max(1, c.bytes.length - 1 - int(20))));
      } else if (c.slow) {
        for (let i = 0; i < c.bytes.length; i += 64) {
          if (socket.destroyed) return;
          socket.write(c.bytes.subarray(i, i + 64));
          await sleep(5);
        }
      } else {
        socket.write(c.bytes);
      }
    });
  });
}

test(`fuzz: ${total} malformed requests never get a 5xx, the server stays up (seed ${seed})`, async () => {
  const server = await startServer(['--max-body-bytes', '65536', '--idle-timeout', '3', '--max-tokens-limit', '4',
    '--io-threads', '2', '--api-key', KEY]);
  try {
    const statuses = new Map();
    const failures = [];
    let done = false;
    // A well-formed client running alongside the fuzzing, one connection per
    // request: every request gets its 200.
    const wellFormed = (async () => {
      let ok = 0;
      while (!done) {
        const c = { bytes: request('POST', '/v1/chat/completions', JSON.stringify(validBody()), auth) };
        const { status, body } = await send(server.port, c);
        assert.equal(status, 200, body);
        assert.equal(JSON.parse(body).object, 'chat.completion');
        ok++;
      }
      return ok;
    })();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next++;
        const c = fuzzCase();
        const r = await send(server.port, c);
        const { status } = r;
        statuses.set(`${c.kind}:${status}`, (statuses.get(`${c.kind}:${status}`) || 0) + 1);
        if (status >= 500 || (status === 0 && !c.mayClose) || (c.expect && !c.expect(r)))
          failures.push({ kind: c.kind, status, responses: r.responses, head: c.bytes.subarray(0, 300).toString('latin1') });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    done = true;
    const served = await wellFormed;
    assert.deepEqual(failures.slice(0, 5), [], `seed ${seed}: ${JSON.stringify([...statuses])}`);
    assert.ok(served > 0);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  } finally {
    const { code } = await server.stop();
    assert.equal(code, 0, server.stderr().slice(-2000));
    assert.doesNotMatch(server.stderr(), /Sanitizer|runtime error/);
  }
});

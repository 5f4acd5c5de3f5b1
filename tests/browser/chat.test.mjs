// The chat page (GET /) in headless Chromium against a real `parley serve`:
// streaming over WebSocket and SSE, stop, conversations across a reload,
// inert XSS payloads, kind error messages, keyboard and narrow screens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, stats } from '../e2e/server.mjs';
import { launchBrowser, withPage, sampleTextLengths, makeChatModel } from './browser.mjs';

const web = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const LAST = '#messages .msg.assistant:last-child';
const FINISHED = `${LAST}:not([data-state="streaming"])`;

let model;
let server;
let browser;

before(async () => {
  model = makeChatModel();  // answers stream over many frames
  [server, browser] = await Promise.all([startServer(['-m', model.path]), launchBrowser()]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  model?.remove();
});

// Opens the chat page with greedy decoding and `maxTokens`.
async function openChat(page, url, { maxTokens = 300, query = '' } = {}) {
  await page.goto(`${url}/${query}`);
  await page.waitForFunction(() => document.body.dataset.mode);
  await page.click('#settings summary');
  await page.fill('#temperature', '0');
  await page.fill('#max-tokens', String(maxTokens));
}

// About `seconds` worth of tokens at this server's pace, from one timed
// request: the page paints once per animation frame, and with the rest of
// ctest -j2 on both cores headless Chromium may draw no frame for a while
// (a fixed 400 tokens once came and went within one frame in a release
// build), while the ASan build took over 30 s for a fixed 2000.
async function tokensFor(seconds) {
  const started = performance.now();
  const r = await fetch(`${server.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: `Pace ${Date.now()}`, max_tokens: 64, ignore_eos: true, temperature: 0 }),
  });
  assert.equal(r.status, 200);
  const perSecond = (await r.json()).usage.completion_tokens / ((performance.now() - started) / 1000);
  return Math.round(Math.min(2000, Math.max(100, perSecond * seconds)));
}

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

test('pages carry the security policy and no inline script or handlers', async () => {
  for (const path of ['/', '/dashboard', '/static/chat.js']) {
    const r = await fetch(server.url + path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-security-policy'), /script-src 'self';.*object-src 'none'/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    const again = await fetch(server.url + path, { headers: { 'If-None-Match': r.headers.get('etag') } });
    assert.equal(again.status, 304, `${path} revalidates with its ETag`);
  }
  for (const file of readdirSync(web)) {
    const text = readFileSync(join(web, file), 'utf8');
    if (file.endsWith('.html')) {
      assert.doesNotMatch(text, /<script(?![^>]*\ssrc=)[^>]*>/i, `${file}: inline script`);
      assert.doesNotMatch(text, /\son[a-z]+\s*=/i, `${file}: event-handler attribute`);
      assert.doesNotMatch(text, /(src|href)="(https?:)?\/\//i, `${file}: outside fetch`);
    }
    if (file.endsWith('.js')) assert.doesNotMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/, file);
  }
});

for (const transport of ['websocket', 'sse']) {
  test(`streams an answer over ${transport} and shows TTFT and tok/s`, async (t) => {
    await withPage(browser, t, async (page) => {
      const maxTokens = await tokensFor(2);
      await openChat(page, server.url, { maxTokens, query: transport === 'sse' ? '?transport=sse' : '' });
      assert.notEqual(await page.textContent('#model'), '…');
      await send(page, `Tell me a long story about ${transport}`);
      const lengths = await sampleTextLengths(page, `${LAST} .content`, FINISHED, 30000);
      const distinct = new Set(lengths.filter((n) => n > 0));
      assert.ok(distinct.size >= 3, `the answer grew over frames: ${[...distinct]}`);
      assert.equal(await page.getAttribute(LAST, 'data-state'), 'done');
      assert.equal(await page.getAttribute(LAST, 'data-transport'), transport);
      assert.match(await page.textContent(`${LAST} .stats`), /^TTFT \d+ ms · [\d.]+ tok\/s · \d+ tokens$/);
      assert.equal(await page.isDisabled('#send'), false);
    });
  });
}

for (const [how, transport] of [['Escape', 'websocket'], ['the Stop button', 'sse']]) {
  test(`${how} stops an answer mid-stream (${transport})`, async (t) => {
    await withPage(browser, t, async (page) => {
      await openChat(page, server.url, { maxTokens: 3000, query: transport === 'sse' ? '?transport=sse' : '' });
      let before, state;
      // The tiny model may end its story before the stop lands on a loaded
      // machine: then the answer is done, and the test asks again.
      for (let attempt = 1; attempt <= 4 && state !== 'stopped'; ++attempt) {
        before = (await stats(server.url)).requests_cancelled;
        const answers = await page.locator('#messages .msg.assistant').count();
        await send(page, `Tell me a very long story, stopped by ${how} (${attempt})`);
        await page.waitForFunction((n) => document.querySelectorAll('#messages .msg.assistant').length > n, answers);
        await page.waitForFunction((s) => document.querySelector(s)?.textContent.length > 20, `${LAST} .content`);
        if (how === 'Escape') await page.keyboard.press('Escape');
        else await page.click('#stop');
        await page.waitForSelector(`${LAST}[data-state="stopped"], ${LAST}[data-state="done"]`, { timeout: 5000 });
        state = await page.getAttribute(LAST, 'data-state');
      }
      assert.equal(state, 'stopped', 'every answer ended before its stop');
      const length = (await page.textContent(`${LAST} .content`)).length;
      await page.waitForTimeout(300);
      assert.equal((await page.textContent(`${LAST} .content`)).length, length, 'no text after the stop');
      assert.match(await page.textContent(`${LAST} .stats`), /stopped/);
      // The server cancelled the request (SSE: when it notices the closed connection).
      const deadline = Date.now() + 3000;
      while ((await stats(server.url)).requests_cancelled <= before && Date.now() < deadline) await page.waitForTimeout(50);
      assert.ok((await stats(server.url)).requests_cancelled > before, 'the engine request was cancelled');
    });
  });
}

// 'sessions': the server's sessions API. 'local': the same server as one
// without it (its /v1/sessions routes answer 404 to this page), where the
// page keeps conversations in localStorage.
for (const mode of ['sessions', 'local']) {
  test(`a conversation is in the list after a reload and continues (${mode})`, async (t) => {
    await withPage(browser, t, async (page) => {
      if (mode === 'local') {
        await page.route(/\/v1\/sessions/, (route) => route.fulfill({
          status: 404, contentType: 'application/json', body: '{"error": {"message": "Unknown route", "code": "not_found"}}' }));
      }
      await openChat(page, server.url, { maxTokens: 20 });
      assert.equal(await page.evaluate(() => document.body.dataset.mode), mode);
      await send(page, `Remember the blue door (${mode})`);
      await page.waitForSelector(`${LAST}[data-state="done"]`);
      const requests = [];
      page.on('request', (r) => { if (r.url().endsWith('/v1/chat/completions')) requests.push(r.postDataJSON()); });
      // Reloaded with SSE, whose request bodies the test can see; same storage.
      await page.goto(`${server.url}/?transport=sse`);
      await page.waitForFunction(() => document.body.dataset.mode);
      await page.locator('#conversations .open', { hasText: `Remember the blue door (${mode})` }).click();
      await page.waitForSelector('#messages .msg.user');
      assert.equal(await page.locator('#messages .msg').count(), 2, 'the first turn is shown again');
      await page.click('#settings summary');
      await page.fill('#max-tokens', '20');
      await send(page, 'And the red one?');
      await page.waitForSelector(`#messages .msg.assistant:nth-child(4)[data-state="done"]`);
      assert.equal(requests.length, 1);
      if (mode === 'sessions') {
        assert.ok(requests[0].session_id, 'the request names the session');
        assert.deepEqual(requests[0].messages, [{ role: 'user', content: 'And the red one?' }]);
        const session = await (await fetch(`${server.url}/v1/sessions/${requests[0].session_id}`)).json();
        assert.deepEqual(session.turns.map((turn) => turn.user), [`Remember the blue door (${mode})`, 'And the red one?']);
      } else {
        assert.equal(requests[0].session_id, undefined);
        assert.deepEqual(requests[0].messages.map((m) => m.role), ['user', 'assistant', 'user']);
        assert.equal(requests[0].messages[0].content, `Remember the blue door (${mode})`);
      }
    });
  });
}

const PAYLOADS = [
  '<script>window.__xss = 1</script>',
  '<img src=x onerror="window.__xss = 2">',
  '[click me](javascript:window.__xss=3)',
  '[upper](JAVASCRIPT:window.__xss=4) and [data](data:text/html,<script>window.__xss=5</script>)',
  '<a href="javascript:window.__xss=6">raw</a> <svg onload="window.__xss=7"></svg>',
].join('\n\n');

async function assertInert(page, scope) {
  const found = await page.evaluate((scope) => ({
    xss: window.__xss,
    elements: document.querySelectorAll(`${scope} script, ${scope} img, ${scope} svg, ${scope} a[href^="javascript" i], ${scope} a[href^="data" i], ${scope} [onerror], ${scope} [onload]`).length,
    text: document.querySelector(scope).textContent,
  }), scope);
  assert.equal(found.xss, undefined, 'no payload ran');
  assert.equal(found.elements, 0, 'no element from the payload exists');
  assert.ok(found.text.includes('<script>window.__xss = 1</script>'), 'payload shown as text');
  assert.ok(found.text.includes('[click me](javascript:window.__xss=3)'), 'javascript: link shown as text');
}

test('XSS payloads in messages and answers stay inert text', async (t) => {
  await withPage(browser, t, async (page) => {
    const dialogs = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
    await openChat(page, server.url, { maxTokens: 5 });
    await send(page, PAYLOADS);
    await page.waitForSelector(FINISHED);
    await assertInert(page, '#messages .msg.user');
    // The renderer itself, fed as a model answer would be.
    const rendered = await page.evaluate(async (text) => {
      const { renderMarkdown } = await import('/static/markdown.js');
      const box = document.createElement('div');
      box.id = 'rendered';
      box.append(renderMarkdown(`${text}\n\n**bold** *em* \`code\` [ok](https://example.com/a)\n\n- one\n- two\n\n1. first\n\n\`\`\`js\nlet a = '<b>';\n\`\`\``));
      document.body.append(box);
      return {
        strong: [...box.querySelectorAll('strong')].at(-1)?.textContent, em: box.querySelector('em')?.textContent,
        code: box.querySelector('p code')?.textContent, link: box.querySelector('a')?.href,
        items: box.querySelectorAll('ul li').length, ordered: box.querySelectorAll('ol li').length,
        block: box.querySelector('pre code')?.textContent, tags: box.querySelectorAll('b').length,
      };
    }, PAYLOADS);
    await assertInert(page, '#rendered');
    assert.deepEqual(rendered, { strong: 'bold', em: 'em', code: 'code', link: 'https://example.com/a',
      items: 2, ordered: 1, block: "let a = '<b>';", tags: 0 });
    assert.deepEqual(dialogs, []);
  });
});

test('an answer from the static answers file with payloads stays inert', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-web-'));
  const file = join(dir, 'answers.json');
  writeFileSync(file, JSON.stringify({ answers: [{ questions: ['show me the payloads'], answer: PAYLOADS }] }));
  const staticServer = await startServer(['--static-answers', file, '--static-answers-mode', 'always']);
  try {
    await withPage(browser, t, async (page) => {
      await openChat(page, staticServer.url, { maxTokens: 20 });
      await send(page, 'Show me the payloads!');
      await page.waitForSelector(`${LAST}[data-state="done"]`);
      await assertInert(page, LAST);
    });
  } finally {
    await staticServer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a 429 is explained with the time to wait', async (t) => {
  const limited = await startServer(['--rate-limit-rps', '0.05', '--rate-limit-burst', '3']);
  try {
    await withPage(browser, t, async (page) => {
      await openChat(page, limited.url, { maxTokens: 5, query: '?transport=sse' });
      for (let i = 0; i < 5; i++) await fetch(`${limited.url}/v1/models`);  // spend the bucket
      await send(page, 'Hello');
      await page.waitForSelector('#notice:not([hidden])');
      assert.match(await page.textContent('#notice'), /Too many requests for now\. Please try again in \d+ s\./);
      assert.equal(await page.inputValue('#input'), 'Hello', 'the message is kept for the retry');
      assert.equal(await page.isDisabled('#send'), false);
    });
  } finally {
    await limited.stop();
  }
});

test('a server with API keys asks for the key, then answers', async (t) => {
  const keyed = await startServer(['--api-key', 'sk-browser-test']);
  try {
    await withPage(browser, t, async (page) => {
      // SSE: WebSocket chat does not yet see the key a session is bound to
      // (ws_conversation passes ""); the socket itself is checked below.
      await page.goto(`${keyed.url}/?transport=sse`);
      await page.waitForSelector('#notice:not([hidden])');
      assert.match(await page.textContent('#notice'), /needs an API key/);
      assert.equal(await page.evaluate(() => document.activeElement.id), 'api-key');
      await page.fill('#api-key', 'sk-browser-test');
      await page.click('#save-key');
      await page.waitForFunction(() => document.body.dataset.mode);
      await page.fill('#max-tokens', '5');
      await send(page, 'Hello');
      await page.waitForSelector(`${LAST}[data-state="done"]`);
      const opens = (key) => page.evaluate((key) => new Promise((resolve) => {
        const socket = new WebSocket(`ws://${location.host}/v1/ws?api_key=${key}`);
        socket.onopen = () => { socket.close(); resolve(true); };
        socket.onerror = () => resolve(false);
      }), key);
      assert.equal(await opens('sk-browser-test'), true, 'the key opens the WebSocket');
      assert.equal(await opens('wrong'), false, 'a wrong key does not');
    });
  } finally {
    await keyed.stop();
  }
});

test('keyboard only: Enter sends, Shift+Enter is a new line, Tab reaches the buttons', async (t) => {
  await withPage(browser, t, async (page) => {
    await openChat(page, server.url, { maxTokens: 5 });
    await page.focus('#input');
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    assert.equal(await page.inputValue('#input'), 'first line\nsecond line');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${LAST}[data-state="done"]`);
    assert.equal(await page.inputValue('#input'), '');
    assert.equal(await page.locator('#messages .msg.user br').count(), 1, 'the newline is kept');
    // Focus order: the input, then its buttons (Stop is disabled when idle), then Settings;
    // before the input, the last answer's Copy button.
    const focusAfter = async (key) => {
      await page.keyboard.press(key);
      return page.evaluate(() => document.activeElement.id || document.activeElement.className || document.activeElement.tagName);
    };
    await page.focus('#input');
    assert.deepEqual([await focusAfter('Tab'), await focusAfter('Tab'), await focusAfter('Tab')], ['send', 'regenerate', 'SUMMARY']);
    await page.focus('#input');
    assert.equal(await focusAfter('Shift+Tab'), 'copy');
  });
});

test('readable at 375 px wide, and dark when the system is', async (t) => {
  await withPage(browser, t, async (page) => {
    await openChat(page, server.url, { maxTokens: 40 });
    await send(page, 'A long line without spaces: ' + 'x'.repeat(300));
    await page.waitForSelector(`${LAST}[data-state="done"]`);
    const layout = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      input: document.getElementById('input').getBoundingClientRect().width,
      send: document.getElementById('send').getBoundingClientRect().right,
    }));
    assert.ok(layout.scroll <= 375, `no horizontal scrolling (${layout.scroll} px)`);
    assert.ok(layout.input > 300, 'the input uses the width');
    assert.ok(layout.send <= 375, 'the send button is on screen');
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.notEqual(await background(), light);
  }, { viewport: { width: 375, height: 740 }, colorScheme: 'light' });
});

// The README's first run, exactly: `parley serve` with every flag at its
// default (the bundled model, embedded state), the chat page opened in a new
// browser, one message typed and sent with Enter, answered. Also: the page
// sends no max_tokens unless the user sets one, and caps a set one at the
// context the server reports.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../e2e/server.mjs';
import { launchBrowser, withPage } from './browser.mjs';

const LAST = '#messages .msg.assistant:last-child';
const FINISHED = `${LAST}:not([data-state="streaming"])`;

let server;
let browser;

before(async () => {
  [server, browser] = await Promise.all([startServer([], {}, { bare: true }), launchBrowser()]);
});

after(async () => {
  await browser?.close();
  assert.equal((await server?.stop())?.code, 0);
});

// The generation requests the page sends, over the WebSocket or as SSE posts.
function recordRequests(page) {
  const sent = [];
  page.on('websocket', (ws) => ws.on('framesent', ({ payload }) => {
    const m = JSON.parse(String(payload));
    if (m.messages || m.prompt) sent.push(m);
  }));
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/v1\/(chat\/completions|sessions\/)/.test(r.url())) sent.push(r.postDataJSON());
  });
  return sent;
}

async function sendAndWait(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
  await page.waitForSelector(FINISHED, { timeout: 30000 });
}

test('first run: the default page answers the first message', async (t) => {
  await withPage(browser, t, async (page) => {
    const sent = recordRequests(page);
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => document.body.dataset.mode);
    await sendAndWait(page, 'Tell me a story about a dog');
    assert.equal(await page.getAttribute(LAST, 'data-state'), 'done', await page.textContent('#notice'));
    assert.ok(await page.isHidden('#notice'), await page.textContent('#notice'));
    assert.ok((await page.textContent(`${LAST} .content`)).trim().length > 0, 'an answer was written');
    assert.match(await page.textContent(`${LAST} .stats`), /\d+ tokens$/);
    assert.equal(sent.length, 1, JSON.stringify(sent));
    assert.equal(sent[0].max_tokens, undefined, 'no max_tokens without a user setting');
  });
});

test('the max-tokens setting is capped at the context the server reports', async (t) => {
  const context = (await (await fetch(`${server.url}/v1/models`)).json()).data[0].max_model_len;
  assert.equal(context, 512);
  await withPage(browser, t, async (page) => {
    const sent = recordRequests(page);
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => document.body.dataset.mode);
    assert.equal(await page.getAttribute('#max-tokens', 'max'), String(context));
    await page.click('#settings summary');
    await page.fill('#temperature', '0');  // greedy: the short answer below does not end early
    await page.fill('#max-tokens', '100000');
    await sendAndWait(page, 'Tell me a story about a cat');
    assert.equal(await page.getAttribute(LAST, 'data-state'), 'done', await page.textContent('#notice'));
    await page.fill('#max-tokens', '7');
    await sendAndWait(page, 'And one about a bird');
    assert.equal(await page.getAttribute(LAST, 'data-state'), 'done', await page.textContent('#notice'));
    assert.deepEqual(sent.map((m) => m.max_tokens), [context, 7]);
    assert.match(await page.textContent(`${LAST} .stats`), /\b7 tokens$/);
  });
});

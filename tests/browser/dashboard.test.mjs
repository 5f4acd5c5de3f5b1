// The dashboard (GET /dashboard) in headless Chromium: its charts follow
// /v1/stats while real load runs against the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, makeSlowModel, stats, sleep } from '../e2e/server.mjs';
import { launchBrowser, withPage } from './browser.mjs';

let model;
let server;
let browser;

before(async () => {
  model = makeSlowModel();
  [server, browser] = await Promise.all([startServer(['-m', model.path]), launchBrowser()]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  model?.remove();
});

// Streams sampled answers from `clients` concurrent clients until stop() is called.
function runLoad(url, clients = 4) {
  let running = true;
  const client = async () => {
    while (running) {
      const r = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: `Load ${Math.random()}` }], max_tokens: 300,
          ignore_eos: true, stream: true, cache: false }),
      });
      await r.text();
    }
  };
  const done = Promise.all(Array.from({ length: clients }, client));
  return async () => { running = false; await done; };
}

// Pixels of a chart's first series drawn above the bottom fifth of the
// plot: none while the value is 0, many once it rises.
function raisedPixels(page, chart) {
  return page.evaluate((chart) => {
    const canvas = document.querySelector(`[data-chart="${chart}"] canvas`);
    const color = getComputedStyle(document.documentElement).getPropertyValue('--series-1').trim();
    const probe = document.createElement('canvas').getContext('2d');
    probe.fillStyle = color;
    probe.fillRect(0, 0, 1, 1);
    const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
    const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let count = 0;
    for (let y = 0; y < height * 0.75; y++) {
      for (let x = 0; x < width; x++) {
        const i = 4 * (y * width + x);
        if (data[i + 3] > 200 && Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 60) count++;
      }
    }
    return count;
  }, chart);
}

const valueText = (page, chart) => page.textContent(`[data-chart="${chart}"] .values`);
const firstNumber = (text) => Number(/-?[\d.]+/.exec(text)?.[0] ?? NaN);

test('the charts follow the load', async (t) => {
  await withPage(browser, t, async (page) => {
    await page.goto(`${server.url}/dashboard`);
    await page.waitForFunction(() => document.getElementById('updated').textContent.startsWith('Updated'));
    await sleep(1200);  // a second poll: rates are known
    assert.equal(await raisedPixels(page, 'tokens'), 0, 'idle: the tok/s line lies at zero');
    assert.equal(await raisedPixels(page, 'running'), 0);
    assert.equal(firstNumber(await valueText(page, 'tokens')), 0);

    const stop = runLoad(server.url);
    let seen = { tokens: 0, running: 0, kv: 0, busy: 0 };
    try {
      const deadline = Date.now() + 8000;
      while (Date.now() < deadline && !(seen.tokens > 0 && seen.running > 0 && seen.kv > 0 && seen.busy > 0)) {
        await sleep(250);
        for (const chart of Object.keys(seen)) seen[chart] = Math.max(seen[chart], firstNumber(await valueText(page, chart)));
      }
      await sleep(1100);  // one more poll under load
      assert.ok(await raisedPixels(page, 'tokens') > 20, 'under load the tok/s line rises');
      assert.ok(await raisedPixels(page, 'running') > 20, 'and so does the running line');
    } finally {
      await stop();
    }
    assert.ok(seen.tokens > 0, `tok/s shown (${seen.tokens})`);
    assert.ok(seen.running >= 1, `running sequences shown (${seen.running})`);
    assert.ok(seen.kv > 0, `KV usage shown (${seen.kv})`);
    assert.ok(seen.busy > 0 && seen.busy <= 100, `engine busy shown (${seen.busy})`);
    const s = await stats(server.url);
    if (s.ttft_p50_s !== undefined) {
      assert.match(await valueText(page, 'ttft'), /^P50 [\d.]+ · P99 [\d.]+$/);
      assert.ok(firstNumber(await valueText(page, 'ttft')) > 0, 'TTFT P50 in ms');
    }
    assert.equal(await page.textContent('#degraded'), s.degraded ? 'Degraded mode' : 'Normal mode');
    assert.equal(await page.textContent('#model'), s.model);
    assert.equal(await valueText(page, 'spec'), '—', 'no speculative decoding on this server');
  });
});

test('the speculative-decoding chart shows the share of drafts kept', async (t) => {
  // Prompt lookup drafting every step, on a prompt that repeats itself.
  const spec = await startServer(['--spec', 'ngram', '--spec-tokens', '4', '--spec-fixed']);
  t.after(() => spec.stop());
  await withPage(browser, t, async (page) => {
    await page.goto(`${spec.url}/dashboard`);
    await page.waitForFunction(() => document.getElementById('updated').textContent.startsWith('Updated'));
    const passage = 'Lily said, "I like the big red ball." Tom said, "I like the big red ball."';
    let kept = NaN;
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline && !Number.isFinite(kept)) {
      const r = await fetch(`${spec.url}/v1/completions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ prompt: `${passage} Mom said,`, max_tokens: 48, temperature: 0, cache: false }),
      });
      assert.equal(r.status, 200);
      await sleep(1100);  // a poll after the drafts
      kept = firstNumber(await valueText(page, 'spec'));
    }
    const s = await stats(spec.url);
    assert.ok(s.spec_drafted > 0, `drafts made (${s.spec_drafted})`);
    assert.ok(kept >= 0 && kept <= 100, `share kept shown (${kept})`);
  });
});

test('one column of charts at 375 px, without horizontal scrolling', async (t) => {
  await withPage(browser, t, async (page) => {
    await page.goto(`${server.url}/dashboard`);
    await page.waitForFunction(() => document.getElementById('updated').textContent.startsWith('Updated'));
    const layout = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      lefts: [...document.querySelectorAll('.chart-card')].map((c) => Math.round(c.getBoundingClientRect().left)),
      canvas: document.querySelector('canvas').width,
    }));
    assert.ok(layout.scroll <= 375, `no horizontal scrolling (${layout.scroll} px)`);
    assert.equal(new Set(layout.lefts).size, 1, 'one column');
    assert.ok(layout.canvas > 250, 'charts use the width');
  }, { viewport: { width: 375, height: 740 } });
});

// Headless Chromium (Debian's, driven by playwright-core) for the browser
// tests, with a screenshot kept for every failed test in $PARLEY_ARTIFACTS
// (ctest sets build-*/browser-artifacts).
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { makeRandomModel } from '../e2e/server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const artifacts = process.env.PARLEY_ARTIFACTS || join(root, 'build', 'browser-artifacts');

export function launchBrowser() {
  return chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
}

// A random-weights model slow enough (~500 tokens/s on one quiet core, ~8x
// slower than the e2e tests' model) that even a short answer streams over
// many animation frames.
export function makeChatModel() {
  return makeRandomModel('chat', ['--dim', '384', '--layers', '6', '--heads', '6']);
}

// Runs `body(page)` in a fresh browser context (its own localStorage). Fails
// on uncaught page errors and Content-Security-Policy violations; on any
// failure saves a screenshot named after the test.
export async function withPage(browser, t, body, contextOptions = {}) {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  page.setDefaultTimeout(10000);  // fail fast: each test file must stay under a minute
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(`CSP violation: ${m.text()}`);
  });
  try {
    await body(page);
    if (problems.length) throw new Error(problems.join('\n'));
  } catch (e) {
    mkdirSync(artifacts, { recursive: true });
    const file = join(artifacts, `${t.name.replace(/[^\w-]+/g, '_')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    e.message += `\n(screenshot: ${file})`;
    throw e;
  } finally {
    await context.close();
  }
}

// The text lengths an element's content had on successive animation frames,
// sampled in the page until `doneSelector` matches (or `ms` passed).
export function sampleTextLengths(page, selector, doneSelector, ms = 15000) {
  return page.evaluate(([selector, doneSelector, ms]) => new Promise((resolve) => {
    const lengths = [];
    const end = performance.now() + ms;
    const frame = () => {
      lengths.push(document.querySelector(selector)?.textContent.length ?? 0);
      if (document.querySelector(doneSelector) || performance.now() > end) resolve(lengths);
      else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }), [selector, doneSelector, ms]);
}

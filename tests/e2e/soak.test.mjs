// The short soak (bench/soak for 45 s): mixed load, no failed request, RSS drift below 5%.
// Under ASan/UBSan (PARLEY_SANITIZED=1) only the requests are checked: the
// sanitizer's allocator keeps per-thread caches and shadow memory whose growth
// under load says nothing about the server's own memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('soak: 45 s of mixed load, no failures, RSS drift below 5%', () => {
  const sanitized = process.env.PARLEY_SANITIZED === '1';
  const asan = [process.env.ASAN_OPTIONS, 'quarantine_size_mb=0'].filter(Boolean).join(':');
  const run = spawnSync('node', ['bench/soak', '-', '45', '6', sanitized ? '1000' : '5'],
    { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: asan } });
  const out = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, out);
  const report = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.equal(report.requests.failed, 0, out);
  assert.ok(report.requests.chat > 10, out);
  if (!sanitized) assert.ok(report.rss_drift_percent < 5, out);
});

// The short soak (bench/soak for 45 s): mixed load, no failed request, RSS drift below 5%.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

test('soak: 45 s of mixed load, no failures, RSS drift below 5%', () => {
  // ASan's quarantine keeps freed memory (up to 256 MiB) and would read as drift.
  const asan = [process.env.ASAN_OPTIONS, 'quarantine_size_mb=0'].filter(Boolean).join(':');
  const out = execFileSync('node', ['bench/soak', '-', '45', '6', '5'],
    { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: asan } });
  const report = JSON.parse(out.trim().split('\n').pop());
  assert.equal(report.requests.failed, 0);
  assert.ok(report.requests.chat > 10, out);
  assert.ok(report.rss_drift_percent < 5, out);
});

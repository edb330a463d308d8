import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FailureLimiter } from '../../src/failure-limiter.js';
import { ManualClock } from '../../src/clock.js';

test('a flood of new keys neither grows the limiter past its bound nor frees the key being guessed', () => {
  const clock = new ManualClock(0);
  const limiter = new FailureLimiter(3, 60_000, () => clock.nowMs(), 100);
  for (let i = 0; i < 3; i++) limiter.fail('victim');
  assert.ok(limiter.blockedFor('victim') > 0);
  for (let i = 0; i < 10_000; i++) limiter.fail(`flood-${i}`);
  assert.ok(limiter.size <= 100, `size ${limiter.size}`);
  assert.ok(limiter.blockedFor('victim') > 0, 'still blocked after the flood');
  // Keys of the flood that were kept still count: the newest are there.
  assert.ok(limiter.hasFailed('flood-9999'));
  assert.ok(!limiter.hasFailed('flood-0'));
  // The block ends with its window, as before.
  clock.advance(61);
  assert.equal(limiter.blockedFor('victim'), 0);
});

test('when every key is blocked, the bound still holds (the oldest goes)', () => {
  const clock = new ManualClock(0);
  const limiter = new FailureLimiter(1, 60_000, () => clock.nowMs(), 50);
  for (let i = 0; i < 500; i++) limiter.fail(`k-${i}`);
  assert.ok(limiter.size <= 50);
  assert.ok(limiter.blockedFor('k-499') > 0);
});

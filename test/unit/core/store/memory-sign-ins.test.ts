// Sessions and sign-ins under way in one process end on time (core/store/memory/memory-sign-ins.ts):
// read past its end, an entry is gone; and ended ones do not pile up as new ones come.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemorySignIns } from '../../../../core/store/memory/memory-sign-ins.ts';

const session = (user: string) => ({
  user_id: user,
  issuer: 'idp',
  subject: user,
  created_at: '2026-03-01T12:00:00.000Z',
  expires_at: '2026-03-01T13:00:00.000Z',
});

test('a session lasts its time to live, and not a moment more; so does a sign-in under way', async () => {
  let now = 1_000_000;
  const store = new MemorySignIns(() => now);
  await store.createSession('s', session('ann'), 3_600_000);
  const start = { ttlMs: 600_000, client: '192.0.2.1', limits: { total: 10, perClient: 10 } };
  await store.beginSignIn('state', { code_verifier: 'v', nonce: 'n', return_to: '/' }, start);
  now += 599_999;
  assert.ok(await store.session('s'));
  now += 1;
  assert.equal(await store.takeSignIn('state'), undefined);
  now += 3_000_000;
  assert.equal(await store.session('s'), undefined);
});

test('ended sessions are let go as new ones are made, so the store holds only live ones', async () => {
  let now = 0;
  const store = new MemorySignIns(() => now);
  for (let i = 0; i < 1000; i++) {
    now += 10_000;
    await store.createSession(`s${i}`, session(`u${i}`), 1000);
  }
  // Each new session swept the ended ones: only the last is held.
  assert.equal(store.size, 1);
  assert.deepEqual(await store.session('s999'), session('u999'));
});

// Bearer JWTs of a configured issuer (gateway/identity/jwt-verifier.ts), against the issuer's keys
// served on a real socket: what is believed, what is refused and why, and how the keys are kept:
// fetched again once for a key the gateway does not hold (a rotation) but at a bounded rate, the
// keys held kept working while the endpoint fails or hangs, and no verification waits on a
// hanging endpoint longer than the fetch's timeout. What the endpoint may not make the gateway do:
// read a body past the bound, keep a JWKS of too many keys, or be fetched once per token while it
// fails (each failure is remembered, and the next fetch waits for a backoff).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { MAX_JWKS_BYTES, MAX_JWKS_KEYS } from '../../../gateway/identity/jwks-cache.ts';
import { jwksAt } from '../../../gateway/identity/jwks-sources.ts';
import { JwtVerifier, type JwtIssuer, type JwtVerifierOptions } from '../../../gateway/identity/jwt-verifier.ts';
import { eventually } from '../../support/eventually.ts';
import { signingKey, signToken, startFakeJwks, type FakeJwks, type SigningKey } from '../../support/fake-jwks.ts';

const ISSUER = 'https://issuer.example.test';
const AUDIENCE = 'tollgate';
/** The verifier's clock (ms): tests move it rather than wait. */
let clock = Date.parse('2026-11-27T12:00:00Z');
const seconds = () => Math.floor(clock / 1000);

let jwks: FakeJwks;
let first: SigningKey;
let second: SigningKey;

before(async () => {
  [first, second] = await Promise.all([signingKey('key-1'), signingKey('key-2')]);
  jwks = await startFakeJwks([first]);
});
after(() => jwks?.close());

/** What the verifiers logged, newest last. */
const logged: string[] = [];
const log = { warn: (_details: object, message: string) => void logged.push(message) };

function verifier(overrides: Partial<JwtIssuer> = {}, options: Partial<JwtVerifierOptions> = {}): JwtVerifier {
  const issuer: JwtIssuer = {
    issuer: ISSUER,
    keys: { source: jwks.url, load: jwksAt(jwks.url) },
    audiences: [AUDIENCE],
    algorithms: ['RS256'],
    clockToleranceSeconds: 30,
    ...overrides,
  };
  return new JwtVerifier([issuer], {
    jwksTimeoutMs: 500,
    jwksMinRefreshMs: 60_000,
    jwksMaxAgeMs: 600_000,
    now: () => clock,
    log,
    ...options,
  });
}

/** Claims valid now for AUDIENCE from ISSUER, with `more` over them. */
const claims = (more: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: 'system:serviceaccount:apps:summarizer',
  iat: seconds(),
  nbf: seconds(),
  exp: seconds() + 600,
  ...more,
});

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a bearer JWT', () => {
  test('signed by the issuer, for us, valid now: believed, with its claims', async () => {
    jwks.serve([first]);
    const verdict = await verifier().verify(await signToken(first, claims()));
    assert.equal(verdict.ok, true);
    assert.equal(verdict.ok && verdict.claims.sub, 'system:serviceaccount:apps:summarizer');
  });

  test('expired, beyond the leeway: refused as expired; within it, believed', async () => {
    const v = verifier();
    assert.deepEqual(await v.verify(await signToken(first, claims({ exp: seconds() - 31 }))), { ok: false, refusal: 'expired' });
    assert.equal((await v.verify(await signToken(first, claims({ exp: seconds() - 20 })))).ok, true);
  });

  test('not yet valid: refused', async () => {
    const token = await signToken(first, claims({ nbf: seconds() + 120 }));
    assert.deepEqual(await verifier().verify(token), { ok: false, refusal: 'not_yet_valid' });
  });

  test('for another audience: refused', async () => {
    const token = await signToken(first, claims({ aud: 'someone-else' }));
    assert.deepEqual(await verifier().verify(token), { ok: false, refusal: 'wrong_audience' });
  });

  test('from an issuer not configured: refused, and its keys never fetched', async () => {
    const before = jwks.fetches;
    const token = await signToken(first, claims({ iss: 'https://elsewhere.example.test' }));
    assert.deepEqual(await verifier().verify(token), { ok: false, refusal: 'unknown_issuer' });
    assert.equal(jwks.fetches, before);
  });

  test('with alg none (unsigned): refused', async () => {
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims())}.`;
    const verdict = await verifier().verify(token);
    assert.equal(verdict.ok, false);
  });

  test("signed HS256 with the issuer's public key as the secret: refused", async () => {
    const secret = new TextEncoder().encode(first.publicPem);
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: first.kid }).sign(secret);
    assert.deepEqual(await verifier().verify(token), { ok: false, refusal: 'algorithm_not_allowed' });
  });

  test('signed by a key the issuer does not publish: refused', async () => {
    const stranger = await signingKey('key-1'); // the same kid, another key
    assert.deepEqual(await verifier().verify(await signToken(stranger, claims())), { ok: false, refusal: 'bad_signature' });
  });

  test('without exp: refused as having no expiry', async () => {
    const { exp: _, ...unending } = claims();
    assert.deepEqual(await verifier().verify(await signToken(first, unending)), { ok: false, refusal: 'no_expiry' });
  });

  test('not a JWT at all: refused as malformed', async () => {
    assert.deepEqual(await verifier().verify('not.a.jwt'), { ok: false, refusal: 'malformed' });
    assert.deepEqual(await verifier().verify('tg-an-api-key'), { ok: false, refusal: 'malformed' });
  });
});

describe("the issuer's keys", () => {
  test('rotated: a token of the new key fetches the keys again and is believed; once the old key is gone, its tokens are refused', async () => {
    jwks.serve([first]);
    const v = verifier();
    assert.equal((await v.verify(await signToken(first, claims()))).ok, true);
    jwks.serve([first, second]);
    assert.equal((await v.verify(await signToken(second, claims()))).ok, true, 'the new key fetched');
    // The old key is removed. Once the keys are fetched again (here for a token of a key nobody
    // holds, past the refresh bound), the old key's tokens are refused.
    jwks.serve([second]);
    clock += 60_001;
    await v.verify(await signToken(await signingKey('key-3'), claims()));
    assert.deepEqual(await v.verify(await signToken(first, claims())), { ok: false, refusal: 'unknown_key' });
    assert.equal((await v.verify(await signToken(second, claims()))).ok, true);
  });

  test('tokens naming unknown keys fetch the keys at most once per refresh bound', async () => {
    jwks.serve([first]);
    const v = verifier();
    await v.verify(await signToken(first, claims()));
    const before = jwks.fetches;
    for (let i = 0; i < 20; i++) {
      const forged = await signToken(await signingKey(`made-up-${i}`), claims());
      assert.deepEqual(await v.verify(forged), { ok: false, refusal: 'unknown_key' });
    }
    assert.equal(jwks.fetches - before, 1, 'one fetch for twenty unknown keys');
    clock += 60_001;
    await v.verify(await signToken(await signingKey('made-up-late'), claims()));
    assert.equal(jwks.fetches - before, 2, 'and one more once the bound has passed');
  });

  test('the endpoint failing or hanging: the keys held keep working', async () => {
    jwks.serve([first]);
    const v = verifier();
    assert.equal((await v.verify(await signToken(first, claims()))).ok, true);
    for (const mode of ['fail', 'hang'] as const) {
      jwks.behave(mode);
      clock += 600_001; // stale: each use asks for them again, in the background
      assert.equal((await v.verify(await signToken(first, claims()))).ok, true, `believed while the endpoint does ${mode}`);
      // A token of a key not held waits for one fetch, bounded by its timeout, and is refused.
      clock += 60_001;
      assert.deepEqual(await v.verify(await signToken(second, claims())), { ok: false, refusal: 'unknown_key' });
    }
    jwks.behave('serve');
  });

  test('never read, and the endpoint hanging: refused as keys unavailable once the fetch times out', async () => {
    jwks.behave('hang');
    try {
      assert.deepEqual(await verifier().verify(await signToken(first, claims())), { ok: false, refusal: 'keys_unavailable' });
    } finally {
      jwks.behave('serve');
    }
  });
});

describe("the issuer's keys, bounded", () => {
  test('a JWKS declaring a body past the bound: refused without reading it, said in the log, and not fetched again per token', async (t) => {
    t.after(() => jwks.behave('serve'));
    jwks.serve([first]);
    jwks.flood(64 * MAX_JWKS_BYTES, { declared: true });
    const v = verifier({}, { jwksTimeoutMs: 30_000 });
    const [fetched, abandoned] = [jwks.fetches, jwks.abandoned];
    const token = await signToken(first, claims());
    for (let i = 0; i < 5; i++) assert.deepEqual(await v.verify(token), { ok: false, refusal: 'keys_unavailable' });
    assert.equal(jwks.fetches - fetched, 1, 'one fetch for five tokens');
    assert.match(logged.at(-1) ?? '', new RegExp(`larger than ${MAX_JWKS_BYTES} bytes`));
    await eventually(() => jwks.abandoned === abandoned + 1, 'the endpoint seeing its answer left unread');
  });

  test('a JWKS sent on and on without a length: reading stops past the bound and refuses it, said in the log', async (t) => {
    t.after(() => jwks.behave('serve'));
    jwks.serve([first]);
    jwks.flood(4 * MAX_JWKS_BYTES, { declared: false }); // then never ends
    const v = verifier({}, { jwksTimeoutMs: 30_000 }); // refused by the bound, not the timeout: the log says which
    const [fetched, abandoned] = [jwks.fetches, jwks.abandoned];
    assert.deepEqual(await v.verify(await signToken(first, claims())), { ok: false, refusal: 'keys_unavailable' });
    assert.equal(jwks.fetches - fetched, 1);
    assert.match(logged.at(-1) ?? '', new RegExp(`larger than ${MAX_JWKS_BYTES} bytes`));
    await eventually(() => jwks.abandoned === abandoned + 1, 'the endpoint seeing its answer left unread');
  });

  test('a JWKS of too many keys: refused at its one fetch, and fetched again after the backoff, not per token', async (t) => {
    t.after(() => jwks.serve([first]));
    const many = Array.from({ length: 10 * MAX_JWKS_KEYS }, (_, i) => ({
      ...first,
      kid: `many-${i}`,
      publicJwk: { ...first.publicJwk, kid: `many-${i}` },
    }));
    jwks.serve([first, ...many]);
    const v = verifier();
    const fetched = jwks.fetches;
    const token = await signToken(first, claims());
    for (let i = 0; i < 20; i++) assert.deepEqual(await v.verify(token), { ok: false, refusal: 'keys_unavailable' });
    assert.equal(jwks.fetches - fetched, 1, 'one fetch for twenty tokens');
    assert.match(logged.at(-1) ?? '', new RegExp(`lists ${many.length + 1} keys, more than ${MAX_JWKS_KEYS}`));
    clock += 1000; // the first backoff
    jwks.serve([first]);
    assert.equal((await v.verify(token)).ok, true, 'fetched again once the backoff has passed, and believed');
    assert.equal(jwks.fetches - fetched, 2);
  });

  test('an issuer failing before its keys were ever read: fetched at a backoff doubling from 1 s to a minute, not per token; believed once it serves', async (t) => {
    t.after(() => jwks.behave('serve'));
    jwks.behave('fail');
    const v = verifier();
    const token = await signToken(first, claims());
    const start = clock;
    const fetchedAt: number[] = [];
    // Four clients, each sending a token every 100 ms for two minutes.
    for (let at = 0; at <= 120_000; at += 100) {
      clock = start + at;
      const fetched = jwks.fetches;
      const verdicts = await Promise.all([1, 2, 3, 4].map(() => v.verify(token)));
      for (const verdict of verdicts) assert.deepEqual(verdict, { ok: false, refusal: 'keys_unavailable' });
      if (jwks.fetches > fetched) fetchedAt.push(at);
    }
    assert.deepEqual(fetchedAt, [0, 1000, 3000, 7000, 15_000, 31_000, 63_000]);
    jwks.behave('serve');
    clock = start + 123_000;
    assert.equal((await v.verify(token)).ok, true);
  });

  test('keys held and stale while the endpoint fails: they keep serving, and the refresh in the background backs off too', async (t) => {
    t.after(() => jwks.behave('serve'));
    jwks.serve([first]);
    const v = verifier();
    const token = await signToken(first, claims());
    assert.equal((await v.verify(token)).ok, true);
    jwks.behave('fail');
    clock += 600_001; // stale: the next use refreshes them in the background
    const [fetched, lines] = [jwks.fetches, logged.length];
    assert.equal((await v.verify(token)).ok, true);
    await eventually(() => logged.length === lines + 1, 'the failed refresh logged');
    for (let i = 0; i < 20; i++) assert.equal((await v.verify(token)).ok, true, 'the keys held serve');
    assert.equal(jwks.fetches - fetched, 1, 'one fetch for twenty-one tokens within the backoff');
    clock += 1000;
    assert.equal((await v.verify(token)).ok, true);
    await eventually(() => logged.length === lines + 2, 'the second failed refresh logged');
    assert.equal(jwks.fetches - fetched, 2, 'and one more once the backoff has passed');
  });
});

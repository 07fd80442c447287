// The Playground's static files as the gateway serves them under /playground: the built page
// and its hashed assets, security headers on every answer (a strict CSP with no inline script
// or style), caching (a year for hashed names, revalidation for index.html), precompressed
// brotli and gzip, and a clear 503 in OpenAI's envelope when nobody ran `npm run build`.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { ensurePlaygroundBuilt } from '../../../gateway/playground/build.ts';
import { CONTENT_SECURITY_POLICY, registerPlayground } from '../../../gateway/http/routes/playground.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, send } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

let gw: TestGateway;
let page: string;
let script: string;
let style: string;

/** A request with no API key at all: the Playground's files are public, its data is not. */
async function anonymous(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(gw.url + path, { headers });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

function assertSecurityHeaders(headers: Headers): void {
  assert.equal(headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  assert.equal(headers.get('x-content-type-options'), 'nosniff');
  assert.equal(headers.get('referrer-policy'), 'no-referrer');
  assert.equal(headers.get('x-frame-options'), 'DENY');
}

before(async () => {
  await ensurePlaygroundBuilt();
  gw = await bed.gateway('models: []\n');
  page = (await anonymous('/playground/')).body.toString('utf8');
  script = /<script type="module" src="([^"]+)"><\/script>/.exec(page)?.[1] ?? '';
  style = /<link rel="stylesheet" href="([^"]+)">/.exec(page)?.[1] ?? '';
});

describe('the page', () => {
  for (const path of ['/playground', '/playground/', '/playground/index.html']) {
    test(`GET ${path} serves index.html without an API key, revalidated on every load`, async () => {
      const answer = await anonymous(path);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(answer.headers.get('cache-control'), 'no-cache');
      assertSecurityHeaders(answer.headers);
      assert.match(answer.body.toString('utf8'), /<title>Tollgate Playground<\/title>/);
    });
  }

  test('the CSP allows only same-origin scripts, styles and connections, and no framing', () => {
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ]) {
      assert.ok(CONTENT_SECURITY_POLICY.split('; ').includes(directive), directive);
    }
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
  });

  test('index.html has no inline script or style (the CSP would block them)', () => {
    assert.match(script, /^\/playground\/assets\/app-[A-Z0-9]+\.js$/);
    assert.match(style, /^\/playground\/assets\/app-[A-Z0-9]+\.css$/);
    assert.doesNotMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/, 'every <script> has a src');
    assert.doesNotMatch(page, /<style|\sstyle=|\son[a-z]+=/i);
  });
});

describe('the hashed assets', () => {
  test('the script and the stylesheet are cached for a year, with their types', async () => {
    for (const [path, type] of [
      [script, 'text/javascript; charset=utf-8'],
      [style, 'text/css; charset=utf-8'],
    ] as const) {
      const answer = await anonymous(path);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers.get('content-type'), type);
      assert.equal(answer.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assertSecurityHeaders(answer.headers);
    }
  });

  test('brotli is sent to a browser that accepts it, gzip to one that accepts only gzip, and the same bytes otherwise', async () => {
    const plain = await anonymous(script, { 'accept-encoding': 'identity' });
    assert.equal(plain.headers.get('content-encoding'), null);
    const br = await fetch(gw.url + script, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(br.headers.get('content-encoding'), 'br');
    assert.equal(br.headers.get('vary'), 'accept-encoding');
    // fetch decodes what it announces; the raw bytes are checked through a plain socket below.
    assert.deepEqual(Buffer.from(await br.arrayBuffer()), plain.body);
    const gzip = await rawGet(script, 'gzip');
    assert.equal(gzip.encoding, 'gzip');
    assert.deepEqual(gunzipSync(gzip.body), plain.body);
    const brotli = await rawGet(script, 'br;q=1, gzip;q=0.5');
    assert.equal(brotli.encoding, 'br');
    assert.deepEqual(brotliDecompressSync(brotli.body), plain.body);
    const refused = await rawGet(script, 'br;q=0, gzip');
    assert.equal(refused.encoding, 'gzip', 'q=0 refuses an encoding');
  });

  test('a browser that has the file already gets 304 for its ETag', async () => {
    const first = await anonymous('/playground/', { 'accept-encoding': 'br' });
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await anonymous('/playground/', { 'accept-encoding': 'br', 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  test('an unknown file is a 404 in the error envelope, with the security headers', async () => {
    const answer = await send(gw, 'GET', '/playground/assets/app-NOPE.js');
    assertError(answer, { status: 404, code: 'unknown_url', message: 'Unknown request URL: GET /playground/assets/app-NOPE.js' });
    assertSecurityHeaders(answer.headers);
  });
});

describe('without a build', () => {
  test('/playground answers 503 telling the operator to run npm run build', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'tollgate-no-playground-'));
    const app = Fastify({ logger: false });
    registerPlayground(app, { dir: empty });
    try {
      for (const url of ['/playground', '/playground/assets/app.js']) {
        const answer = await app.inject({ method: 'GET', url });
        assertError(
          { status: answer.statusCode, headers: new Headers(answer.headers as Record<string, string>), text: answer.body },
          {
            status: 503,
            code: 'playground_not_built',
            type: 'server_error',
            message: 'The Playground is not built: run `npm run build` (it writes dist/playground), then restart the gateway',
          },
        );
        assert.equal(answer.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      }
    } finally {
      await app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('--playground false', () => {
  test('turns the Playground off: /playground is an unknown URL', async () => {
    const off = await bed.gateway('models: []\n', { settings: { playground: false } });
    try {
      assertError(await send(off, 'GET', '/playground/'), {
        status: 404,
        code: 'unknown_url',
        message: 'Unknown request URL: GET /playground/',
      });
    } finally {
      await off.close();
    }
  });
});

/** GET without fetch's automatic decoding, to see the bytes and Content-Encoding as sent. */
async function rawGet(path: string, acceptEncoding: string): Promise<{ encoding: string | null; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(gw.url + path, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ encoding: (res.headers['content-encoding'] as string | undefined) ?? null, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

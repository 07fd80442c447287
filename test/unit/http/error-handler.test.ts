// The one error handler: what the catalog holds is answered as it is; anything else is a bug,
// answered with a 500 that says nothing of it, while the error and its stack go to the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { LogThrottle } from '../../../gateway/observability/log-throttle.ts';
import { errorHandler } from '../../../gateway/http/error-handler.ts';
import { ConflictError } from '../../../core/store/store-errors.ts';

async function appThrowing(thrown: unknown) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream } });
  app.setErrorHandler(errorHandler(1024, new LogThrottle()));
  app.get('/', () => {
    throw thrown;
  });
  await app.ready();
  return { app, lines };
}

test('an internal error: 500 internal_error with nothing of it in the answer, and the error with its stack in the log', async () => {
  const secret = new TypeError('cannot read "token" of undefined at /srv/gateway/billing/billing.ts:12');
  const { app, lines } = await appThrowing(secret);
  const answer = await app.inject({ method: 'GET', url: '/' });
  assert.equal(answer.statusCode, 500);
  assert.deepEqual(answer.json(), {
    error: { message: 'The gateway hit an internal error; it has been logged', type: 'server_error', param: null, code: 'internal_error' },
  });
  assert.ok(!answer.body.includes('billing.ts') && !answer.body.includes('TypeError'));
  const logged = lines.find((line) => line.msg === 'unhandled error') as { err?: { message: string; stack: string } } | undefined;
  assert.equal(logged?.err?.message, secret.message);
  assert.match(logged?.err?.stack ?? '', /^TypeError/);
});

test("an error of the catalog's: answered as it is, and not logged as a bug", async () => {
  const { app, lines } = await appThrowing(new ConflictError('A user with id "ann" already exists'));
  const answer = await app.inject({ method: 'GET', url: '/' });
  assert.equal(answer.statusCode, 409);
  assert.equal(answer.json().error.message, 'A user with id "ann" already exists');
  assert.equal(
    lines.find((line) => line.msg === 'unhandled error'),
    undefined,
  );
});

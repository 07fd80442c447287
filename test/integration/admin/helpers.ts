// Helpers of the admin and account API tests: users with keys made through the API itself,
// error envelopes checked exactly, and bounded polling for what is written after an answer.
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { waitUntil } from '../http/helpers.ts';

export { waitUntil };

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export const USER_MESSAGE = [{ role: 'user', content: 'Say hello' }];

/** Bearer headers for a key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export interface TestUser {
  readonly id: string;
  readonly key: string;
  readonly keyId: string;
  readonly auth: Record<string, string>;
}

/** Creates a user (as the bootstrap admin) and a key for them. */
export async function createUser(gw: TestGateway, spec: Record<string, unknown>): Promise<TestUser> {
  const user = await gw.post('/v1/admin/users', spec);
  assert.equal(user.status, 201, JSON.stringify(user.body));
  const key = await gw.post(`/v1/admin/users/${user.body.id}/keys`, { name: 'test key' });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  return { id: user.body.id, key: key.body.key, keyId: key.body.id, auth: bearer(key.body.key) };
}

export interface ExpectedError {
  status: number;
  code: string;
  type?: string;
  param?: string | null;
  message?: string | RegExp;
}

/** OpenAI's envelope, exactly {"error":{message,type,param,code}}, with the expected values. */
export function assertError(answer: Answer, expected: ExpectedError): void {
  assert.equal(answer.status, expected.status, `status (body: ${JSON.stringify(answer.body)})`);
  assert.deepEqual(Object.keys(answer.body), ['error']);
  const error = answer.body.error;
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(error.code, expected.code);
  if (expected.type !== undefined) assert.equal(error.type, expected.type);
  if (expected.param !== undefined) assert.equal(error.param, expected.param);
  if (typeof expected.message === 'string') assert.equal(error.message, expected.message);
  else if (expected.message) assert.match(error.message, expected.message);
}

export const invalid = (param: string | null, message?: string | RegExp): ExpectedError => ({
  status: 400,
  code: 'invalid_request',
  type: 'invalid_request_error',
  param,
  ...(message === undefined ? {} : { message }),
});

export const notFound = (message?: string | RegExp, param?: string | null): ExpectedError => ({
  status: 404,
  code: 'not_found',
  type: 'not_found_error',
  ...(message === undefined ? {} : { message }),
  ...(param === undefined ? {} : { param }),
});

export const conflict = (param: string | null, message?: string | RegExp): ExpectedError => ({
  status: 409,
  code: 'conflict',
  type: 'invalid_request_error',
  param,
  ...(message === undefined ? {} : { message }),
});

export const ADMIN_REQUIRED: ExpectedError = {
  status: 403,
  code: 'admin_required',
  type: 'permission_error',
  message: 'This route needs an admin API key',
};

/** A chat request as `auth`. */
export function chat(gw: TestGateway, model: string, auth: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Answer> {
  return gw.post('/v1/chat/completions', { model, messages: USER_MESSAGE, ...extra }, auth);
}

/** The caller's usage records, polled until `count` are there (they are written just after the answer). */
export async function usageRecords(gw: TestGateway, auth: Record<string, string>, count: number, query = ''): Promise<Answer> {
  const answer = await waitUntil(
    () => gw.get(`/v1/usage${query}`, auth),
    (a) => a.status !== 200 || a.body.totals.requests >= count,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.totals.requests, count, 'usage records written');
  return answer;
}

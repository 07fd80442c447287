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

export { chat, USER_MESSAGE } from '../../support/routing.ts';

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

export { assertError, type ExpectedError } from '../../support/api-errors.ts';
import type { ExpectedError } from '../../support/api-errors.ts';

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

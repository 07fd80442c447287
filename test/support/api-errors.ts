// The one check of an error answer: OpenAI's envelope, exactly {"error":{message,type,param,code}},
// served as JSON, with the status and type the gateway's table of codes gives the code, and
// nothing of a stack trace or source path in it.
import assert from 'node:assert/strict';
import { CODES } from '../../gateway/api/api-error.ts';

export interface ExpectedError {
  status: number;
  code: string;
  /** Checked against the table of codes when not given. */
  type?: string;
  param?: string | null;
  message?: string | RegExp;
}

/** An answer as gw.post() and friends give it (parsed), or as a raw fetch gives it (text). */
export type ErrorAnswer = { status: number; headers: Headers; body: any } | { status: number; headers: Headers; text: string };

/** Checks `answer` is the expected error; returns its `error` object. */
export function assertError(answer: ErrorAnswer, expected: ExpectedError): Record<string, unknown> {
  const text = 'text' in answer ? answer.text : JSON.stringify(answer.body);
  assert.equal(answer.status, expected.status, `status (body: ${text})`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assertNoInternals(text);
  const body = 'text' in answer ? JSON.parse(answer.text) : answer.body;
  assert.deepEqual(Object.keys(body), ['error']);
  const error = body.error;
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof error.message, 'string');
  assert.equal(error.code, expected.code);
  const known = (CODES as Record<string, { status: number | readonly number[]; type: string }>)[expected.code];
  assert.ok(known, `${expected.code} is a code of gateway/api/api-error.ts`);
  assert.equal(error.type, expected.type ?? known.type);
  if (expected.param !== undefined) assert.equal(error.param, expected.param);
  if (typeof expected.message === 'string') assert.equal(error.message, expected.message);
  else if (expected.message) assert.match(error.message, expected.message);
  return error;
}

/** No stack frames, source files or Node internals leak into what a client reads. */
export function assertNoInternals(text: string): void {
  assert.doesNotMatch(text, /\bat .+\(.*:\d+:\d+\)|\.ts:\d+|node:internal|node_modules|stack/i, `internals leaked: ${text}`);
}

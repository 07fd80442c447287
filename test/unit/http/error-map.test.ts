// The one map from the errors the gateway's parts throw to what a caller reads: each domain
// error gets its catalog entry (status, code, message, param, headers); anything else is internal
// and shows nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BudgetsUnavailableError,
  ContextLengthError,
  InsufficientBudgetError,
  RateLimitedError,
  UnknownUserError,
} from '../../../gateway/billing/billing-errors.ts';
import { NoProviderForEndpointError, ProvidersFailedError, RequestRejectedError } from '../../../gateway/routing/routing-errors.ts';
import { UpstreamError } from '../../../gateway/providers/upstream-error.ts';
import { ConflictError, KeyLimitError, NotFoundError, StoreUnavailableError } from '../../../core/store/store-errors.ts';
import { InvalidResourceError, KubernetesWriteError } from '../../../gateway/kubernetes/write-errors.ts';
import { publicError, statusOf, streamEnding } from '../../../gateway/pipeline/error-map.ts';

interface Shown {
  status: number;
  code: string;
  message: string;
  param?: string | null;
  headers?: Record<string, string>;
}

const timeout = new UpstreamError('timeout', 'the backend did not answer within its timeout');
const refused = new UpstreamError('status', 'the backend answered 503: busy', 503);

const CASES: { name: string; error: unknown; shown: Shown }[] = [
  {
    name: 'a budget without room for the hold',
    error: new InsufficientBudgetError(1_500_000n, 2_000_001n, 'user'),
    shown: {
      status: 402,
      code: 'insufficient_budget',
      message: 'Insufficient budget: 1.5 remaining, and this request may cost up to 2.000001 (set a lower max_tokens to reserve less)',
      headers: { 'x-tollgate-limit-level': 'user' },
    },
  },
  {
    name: "a team's budget without room: the message names the team",
    error: new InsufficientBudgetError(0n, 2_000_001n, 'team'),
    shown: {
      status: 402,
      code: 'insufficient_budget',
      message: 'Insufficient team budget: 0 remaining, and this request may cost up to 2.000001 (set a lower max_tokens to reserve less)',
      headers: { 'x-tollgate-limit-level': 'team' },
    },
  },
  {
    name: "a key's rate limit: the message names the key",
    error: new RateLimitedError('requests_per_day', { requests_per_day: 100 }, 60_000, {}, 'key'),
    shown: {
      status: 429,
      code: 'rate_limit_exceeded',
      message: 'Key rate limit reached: 100 requests per day on this model; retry in 60s',
      headers: { 'retry-after': '60', 'x-tollgate-limit-level': 'key' },
    },
  },
  {
    name: 'a rate limit reached, with Retry-After and the x-ratelimit-* headers',
    error: new RateLimitedError(
      'requests_per_minute',
      { requests_per_minute: 10 },
      2_100,
      {
        requests_per_minute: { limit: 10, remaining: 0, resetMs: 2_100 },
      },
      'user',
    ),
    shown: {
      status: 429,
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached: 10 requests per minute on this model; retry in 3s',
      headers: {
        'retry-after': '3',
        'x-tollgate-limit-level': 'user',
        'x-ratelimit-limit-requests': '10',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '3s',
      },
    },
  },
  {
    name: 'a daily token limit, retried in at least a second',
    error: new RateLimitedError('tokens_per_day', { tokens_per_day: 1000 }, 10, {}, 'user'),
    shown: {
      status: 429,
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached: 1000 tokens per day on this model; retry in 1s',
      headers: { 'retry-after': '1', 'x-tollgate-limit-level': 'user' },
    },
  },
  {
    name: 'a completions prompt past the context',
    error: new ContextLengthError('completions', 100, 90, 20),
    shown: {
      status: 400,
      code: 'context_length_exceeded',
      param: 'prompt',
      message:
        "This model's maximum context length is 100 tokens. However, you requested 110 tokens (90 in the prompt, 20 in the completion). Please reduce the length of the prompt or completion.",
    },
  },
  {
    name: 'the store down on a priced request',
    error: new BudgetsUnavailableError('the store (Redis) does not answer'),
    shown: {
      status: 503,
      code: 'store_unavailable',
      message: 'Budgets cannot be checked right now (the store is unavailable); try again shortly',
      headers: { 'retry-after': '1' },
    },
  },
  {
    name: 'the store down anywhere else',
    error: new StoreUnavailableError('the store (Redis) does not answer'),
    shown: {
      status: 503,
      code: 'store_unavailable',
      message: 'The gateway cannot reach its store right now; try again shortly',
      headers: { 'retry-after': '1' },
    },
  },
  {
    name: 'a key whose user was deleted',
    error: new UnknownUserError('u1'),
    shown: { status: 401, code: 'invalid_api_key', message: 'The user of this API key no longer exists' },
  },
  {
    name: 'a router with no provider for the endpoint',
    error: new NoProviderForEndpointError('chat', '/v1/rerank'),
    shown: { status: 400, code: 'unsupported_endpoint', param: 'model', message: 'No provider of model "chat" serves /v1/rerank' },
  },
  {
    name: "a backend's 422",
    error: new RequestRejectedError(new UpstreamError('status', 'the backend answered 422: bad', 422)),
    shown: { status: 400, code: 'upstream_rejected', message: 'The provider rejected the request: the backend answered 422: bad' },
  },
  {
    name: "a backend's 413 stays 413",
    error: new RequestRejectedError(new UpstreamError('status', 'the backend answered 413: too big', 413)),
    shown: { status: 413, code: 'upstream_rejected', message: 'The provider rejected the request: the backend answered 413: too big' },
  },
  {
    name: 'every provider failed',
    error: new ProvidersFailedError('chat', 2, refused),
    shown: {
      status: 502,
      code: 'upstream_failed',
      message: 'All providers of model "chat" failed (2 attempts); last error: the backend answered 503: busy',
    },
  },
  {
    name: 'the last provider tried timed out',
    error: new ProvidersFailedError('chat', 1, timeout),
    shown: { status: 504, code: 'upstream_timeout', message: 'No provider of model "chat" answered within its timeout (1 attempt)' },
  },
  {
    name: 'no provider could be tried',
    error: new ProvidersFailedError('chat', 0, undefined),
    shown: {
      status: 502,
      code: 'upstream_failed',
      message: 'All providers of model "chat" failed (0 attempts); last error: no provider could be tried',
    },
  },
  {
    name: 'the client went away',
    error: new UpstreamError('aborted', 'the request was cancelled'),
    shown: { status: 499, code: 'client_closed_request', message: 'The client closed the request' },
  },
  {
    name: 'a name already taken',
    error: new ConflictError('A user with id "u1" already exists'),
    shown: { status: 409, code: 'conflict', message: 'A user with id "u1" already exists' },
  },
  {
    name: 'something that does not exist',
    error: new NotFoundError('user "u1" does not exist'),
    shown: { status: 404, code: 'not_found', message: 'user "u1" does not exist' },
  },
  {
    name: 'one key too many',
    error: new KeyLimitError('u1', 3),
    shown: {
      status: 409,
      code: 'key_limit_reached',
      message: 'The user already has 3 active API keys, the most allowed; revoke one first (or let one expire)',
    },
  },
  {
    name: 'a resource Kubernetes refuses as invalid',
    error: new InvalidResourceError('id: "x" cannot be the id of a ModelProvider in namespace "ns"', 'id'),
    shown: { status: 400, code: 'invalid_request', param: 'id', message: 'id: "x" cannot be the id of a ModelProvider in namespace "ns"' },
  },
  {
    name: 'a write the Kubernetes API fails',
    error: new KubernetesWriteError('etcdserver: request timed out'),
    shown: { status: 502, code: 'kubernetes_error', message: 'The Kubernetes API refused the write: etcdserver: request timed out' },
  },
];

describe('each error of the domain is shown as its catalog entry', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const shown = publicError(c.error);
      assert.ok(shown, 'shown to the caller');
      assert.equal(shown.status, c.shown.status);
      assert.equal(statusOf(c.error), c.shown.status);
      assert.deepEqual(shown.toJSON().error, {
        message: c.shown.message,
        type: shown.type,
        param: c.shown.param ?? null,
        code: c.shown.code,
      });
      assert.deepEqual({ ...shown.headers }, c.shown.headers ?? {});
    });
  }
});

describe('anything else is internal: not shown, recorded as 500', () => {
  const internal: [string, unknown][] = [
    ['an Error', new Error('secret detail at /srv/gateway/x.ts:12')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['an upstream failure that escaped the forwarder', new UpstreamError('connect', 'the backend could not be reached')],
    ['a thrown string', 'boom'],
    ['undefined', undefined],
  ];
  for (const [name, error] of internal) {
    test(name, () => {
      assert.equal(publicError(error), undefined);
      assert.equal(statusOf(error), 500);
    });
  }
});

describe('a stream that ends early ends with an entry of the catalog', () => {
  test('broken off by the backend: the SSE error event, 502', () => {
    const ending = streamEnding(new UpstreamError('protocol', 'the backend ended the stream before the answer was complete'));
    assert.equal(ending.status, 502);
    assert.deepEqual(ending.toJSON(), {
      error: {
        message: 'The provider broke off the answer: the backend ended the stream before the answer was complete',
        type: 'upstream_error',
        param: null,
        code: 'upstream_interrupted',
      },
    });
  });

  test('the client gone: 499', () => {
    const ending = streamEnding(new UpstreamError('aborted', 'the request was cancelled'));
    assert.equal(ending.status, 499);
    assert.equal(ending.code, 'client_closed_request');
  });
});

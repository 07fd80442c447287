// The account directory's contract (gateway/accounts/account-directory.ts): what the admin API and
// /v1/me do with users, teams and keys, as one suite run against each implementation: the store's
// on the memory and Redis stores (store-accounts.test.ts), and Kubernetes mode's on a real
// kube-apiserver with the operator putting the resources into Redis (test/e2e/cr-accounts.test.ts).
// A write in Kubernetes mode is read back once the operator has reconciled it, so what a test wrote
// is read with `settled` (at once on a store); everything else is asserted as it is answered.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { hashKey, hintOf } from '../../../core/accounts/api-keys.ts';
import { KeyLimits, keyLimitsOf } from '../../../core/resources/key-limits.ts';
import { TeamSpec, type TeamSpecInput } from '../../../core/resources/team.ts';
import { UserSpec, type UserSpecInput } from '../../../core/resources/user.ts';
import type { ApiKeyRecord } from '../../../core/store/accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../../../core/store/store-errors.ts';
import type { AccountDirectory } from '../../../gateway/accounts/account-directory.ts';
import { poll } from '../../support/eventually.ts';

/** One test's directory. */
export interface DirectoryUnderTest {
  readonly directory: AccountDirectory;
  /** Puts a user straight into the store, where no resource names it (as the bootstrap admin is). */
  seedUser(user: UserSpec): Promise<void>;
  close(): Promise<void>;
}

export interface DirectoryHarness {
  /** A directory; its state may be shared with earlier tests (each test's ids are its own). */
  make(): Promise<DirectoryUnderTest>;
  /** What the directory's requiresKnownTeam is. */
  readonly requiresKnownTeam: boolean;
  /** Longest a write may take to be read back. */
  readonly settleMs: number;
  /** What the processes involved (the operator) last wrote, for a test that times out. */
  readonly output?: () => string;
}

const NOW = new Date(Date.UTC(2026, 2, 1, 12));

const specOf = <T extends { created_at: string }>({ created_at: _createdAt, ...spec }: T) => spec;

function apiKey(userId: string, id: string): ApiKeyRecord {
  const secret = `tg-contract-${randomBytes(16).toString('hex')}`;
  return {
    id,
    user_id: userId,
    name: `key ${id}`,
    hash: hashKey(secret),
    hint: hintOf(secret),
    created_at: NOW.toISOString(),
    expires_at: null,
    revoked_at: null,
  };
}

export function describeAccountDirectoryContract(name: string, harness: DirectoryHarness): void {
  describe(`account directory contract: ${name}`, () => {
    let under: DirectoryUnderTest;
    let accounts: AccountDirectory;
    /** Makes an id this test alone uses, so tests may share a cluster and a Redis. */
    let id: (name: string) => string;
    beforeEach(async () => {
      under = await harness.make();
      accounts = under.directory;
      const tag = randomBytes(3).toString('hex');
      id = (base) => `${base}-${tag}`;
    });
    afterEach(() => under.close());

    /** The value `read` gives once `accept` holds for it: at once on a store, once the operator has reconciled in Kubernetes mode. */
    async function settled<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
      const { value, accepted, error } = await poll(read, accept, { timeoutMs: harness.settleMs, intervalMs: 50 });
      const last = error === undefined ? `last value: ${JSON.stringify(value)}` : `last error: ${String(error)}`;
      assert.ok(accepted, `not within ${harness.settleMs} ms: ${what} (${last})\n${harness.output?.().slice(-6000) ?? ''}`);
      return value as T;
    }
    const userSpec = (base: string, fields: Partial<UserSpecInput> = {}) =>
      UserSpec.parse({ id: id(base), name: `User ${base}`, ...fields });
    const teamSpec = (base: string, fields: Partial<TeamSpecInput> = {}) =>
      TeamSpec.parse({ id: id(base), name: `Team ${base}`, ...fields });
    const userRead = (spec: UserSpec) =>
      settled(
        `user ${spec.id} read as written`,
        () => accounts.getUser(spec.id),
        (u) => u !== undefined && isDeepStrictEqual(specOf(u), spec),
      );
    const teamRead = (spec: TeamSpec) =>
      settled(
        `team ${spec.id} read as written`,
        () => accounts.getTeam(spec.id),
        (t) => t !== undefined && isDeepStrictEqual(specOf(t), spec),
      );

    test('requiresKnownTeam tells whether a user may name only a team that exists', () => {
      assert.equal(accounts.requiresKnownTeam, harness.requiresKnownTeam);
    });

    describe('users', () => {
      test('a created user is answered with `now` as created_at, then read and listed as written', async () => {
        const spec = userSpec('alice', {
          budget: '12.5',
          budget_period: 'monthly',
          allowed_routers: ['chat'],
          rate_limits: { requests_per_minute: 10 },
        });
        assert.deepEqual(await accounts.createUser(spec, NOW), { ...spec, created_at: NOW.toISOString() });
        await userRead(spec);
        const listed = await accounts.listUsers(null, 500);
        assert.deepEqual(listed.items.filter((u) => u.id === spec.id).map(specOf), [spec]);
      });

      test('an id taken is refused with ConflictError, even before the first user is read back, and the first stays', async () => {
        const spec = userSpec('bob');
        await accounts.createUser(spec, NOW);
        await assert.rejects(accounts.createUser({ ...spec, name: 'Another Bob' }, NOW), ConflictError);
        await userRead(spec);
        await assert.rejects(accounts.createUser({ ...spec, name: 'Another Bob' }, NOW), ConflictError);
      });

      test('the id of a user only the store holds is taken too', async () => {
        const spec = userSpec('admin', { role: 'admin' });
        await under.seedUser(spec);
        await assert.rejects(accounts.createUser(userSpec('admin'), NOW), ConflictError);
        assert.deepEqual(specOf((await accounts.getUser(spec.id))!), spec);
      });

      test('an update replaces the spec and keeps created_at', async () => {
        const spec = userSpec('carol', { budget: '10' });
        await accounts.createUser(spec, NOW);
        const stored = await userRead(spec);
        const next = userSpec('carol', { name: 'Carol Renamed', budget: '20', budget_period: 'daily', priority: 3 });
        assert.deepEqual(await accounts.updateUser(next), { ...next, created_at: stored!.created_at });
        await userRead(next);
      });

      test('an update of a user the store does not hold is NotFoundError', async () => {
        await assert.rejects(accounts.updateUser(userSpec('nobody')), NotFoundError);
      });

      test('a deleted user is read no more, nor are their keys; deleting one never made answers false', async () => {
        const spec = userSpec('dave');
        await accounts.createUser(spec, NOW);
        await userRead(spec);
        const key = apiKey(spec.id, id('k-dave'));
        await accounts.addKey(key);
        assert.equal(await accounts.deleteUser(spec.id), true);
        await settled(
          `user ${spec.id} gone`,
          () => accounts.getUser(spec.id),
          (u) => u === undefined,
        );
        assert.deepEqual(await accounts.listKeys(spec.id), []);
        assert.equal(await accounts.deleteUser(id('never')), false);
      });

      test('a user only the store holds (the bootstrap admin) is deleted at once', async () => {
        const spec = userSpec('root', { role: 'admin' });
        await under.seedUser(spec);
        assert.equal(await accounts.deleteUser(spec.id), true);
        assert.equal(await accounts.getUser(spec.id), undefined);
      });

      test('a user may name a team written after it', async () => {
        const team = teamSpec('later');
        const user = userSpec('erin', { team: team.id });
        await accounts.createUser(user, NOW);
        await accounts.createTeam(team, NOW);
        await userRead(user);
        await teamRead(team);
      });
    });

    describe('teams', () => {
      test('a created team is answered with `now` as created_at, then read and listed as written', async () => {
        const spec = teamSpec('red', { budget: '100', budget_period: 'monthly', priority: 2, rate_limits: { tokens_per_minute: 1000 } });
        assert.deepEqual(await accounts.createTeam(spec, NOW), { ...spec, created_at: NOW.toISOString() });
        await teamRead(spec);
        const listed = await accounts.listTeams(null, 500);
        assert.deepEqual(listed.items.filter((t) => t.id === spec.id).map(specOf), [spec]);
      });

      test('an id taken is refused with ConflictError, even before the first team is read back', async () => {
        const spec = teamSpec('blue');
        await accounts.createTeam(spec, NOW);
        await assert.rejects(accounts.createTeam({ ...spec, name: 'Another Blue' }, NOW), ConflictError);
        await teamRead(spec);
        await assert.rejects(accounts.createTeam({ ...spec, name: 'Another Blue' }, NOW), ConflictError);
      });

      test('an update replaces the spec and keeps created_at', async () => {
        const spec = teamSpec('green');
        await accounts.createTeam(spec, NOW);
        const stored = await teamRead(spec);
        const next = teamSpec('green', { name: 'Green Renamed', budget: '5', budget_period: 'weekly', allowed_routers: ['chat'] });
        assert.deepEqual(await accounts.updateTeam(next), { ...next, created_at: stored!.created_at });
        await teamRead(next);
      });

      test('an update of a team the store does not hold is NotFoundError', async () => {
        await assert.rejects(accounts.updateTeam(teamSpec('none')), NotFoundError);
      });

      test('a deleted team is read no more; deleting one never made answers false', async () => {
        const spec = teamSpec('gold');
        await accounts.createTeam(spec, NOW);
        await teamRead(spec);
        assert.equal(await accounts.deleteTeam(spec.id), true);
        await settled(
          `team ${spec.id} gone`,
          () => accounts.getTeam(spec.id),
          (t) => t === undefined,
        );
        assert.equal(await accounts.deleteTeam(id('never')), false);
      });
    });

    // On users only the store holds: in Kubernetes mode a GatewayUser also has a key of the
    // operator's, which is not the directory's to make.
    describe('API keys', () => {
      test('keys are listed in the order made, and changed and revoked one by one', async () => {
        const user = userSpec('frank');
        await under.seedUser(user);
        const first = apiKey(user.id, id('k1'));
        const second = apiKey(user.id, id('k2'));
        await accounts.addKey(first);
        await accounts.addKey(second);
        assert.deepEqual(await accounts.listKeys(user.id), [first, second]);
        const limits = KeyLimits.parse({ budget: '1', budget_period: 'daily', allowed_routers: ['chat'] });
        const changed = await accounts.updateKey(user.id, second.id, limits);
        assert.deepEqual(changed && keyLimitsOf(changed), limits);
        const revoked = await accounts.revokeKey(user.id, first.id, NOW);
        assert.deepEqual(revoked, { ...first, revoked_at: NOW.toISOString() });
        assert.deepEqual(await accounts.listKeys(user.id), [revoked, changed]);
      });

      test('a key past maxActive active ones is KeyLimitError; a revoked one frees its place', async () => {
        const user = userSpec('grace');
        await under.seedUser(user);
        const first = apiKey(user.id, id('k1'));
        await accounts.addKey(first, 1);
        await assert.rejects(accounts.addKey(apiKey(user.id, id('k2')), 1), KeyLimitError);
        await accounts.revokeKey(user.id, first.id, NOW);
        await accounts.addKey(apiKey(user.id, id('k3')), 1);
        assert.equal((await accounts.listKeys(user.id)).length, 2);
      });

      test('a key for a user the store does not hold is NotFoundError; a key the user does not have is undefined', async () => {
        await assert.rejects(accounts.addKey(apiKey(id('ghost'), id('k1'))), NotFoundError);
        const user = userSpec('heidi');
        await under.seedUser(user);
        assert.equal(await accounts.updateKey(user.id, id('missing'), KeyLimits.parse({})), undefined);
        assert.equal(await accounts.revokeKey(user.id, id('missing'), NOW), undefined);
      });
    });
  });
}

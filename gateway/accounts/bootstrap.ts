// Users that must exist at start-up: the bootstrap admin (a key given by environment variable
// or file, so a fresh system can be administered at all) and the teams and users a config file
// declares.
import { isDeepStrictEqual } from 'node:util';
import type { AccountStore } from '../../core/store/accounts.ts';
import { keyLimitsOf } from '../../core/resources/key-limits.ts';
import type { TeamSpec } from '../../core/resources/team.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import type { FileUser } from '../config/config-file.ts';
import { hashKey, hintOf, KEY_PREFIX } from '../../core/accounts/api-keys.ts';

export const BOOTSTRAP_USER = 'admin';
export const BOOTSTRAP_KEY = 'bootstrap';

export async function ensureBootstrapAdmin(accounts: AccountStore, secret: string, now: Date): Promise<void> {
  if (!secret.startsWith(KEY_PREFIX) || secret.length < KEY_PREFIX.length + 32) {
    throw new Error(`the admin key must start with "${KEY_PREFIX}" and have at least 32 characters after it`);
  }
  const hash = hashKey(secret);
  if ((await accounts.findKey(hash))?.user.role === 'admin') return;
  if (!(await accounts.getUser(BOOTSTRAP_USER))) {
    try {
      await accounts.createUser(
        {
          id: BOOTSTRAP_USER,
          name: 'Administrator',
          role: 'admin',
          team: null,
          budget: null,
          budget_period: null,
          allowed_routers: null,
          budget_alerts: null,
          soft_budget: false,
          priority: 0,
          rate_limits: null,
          subjects: null,
        },
        now,
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error; // another gateway created it first
    }
  }
  const keyId = `${BOOTSTRAP_KEY}-${hash.slice(0, 8)}`;
  try {
    await accounts.addKey({
      id: keyId,
      user_id: BOOTSTRAP_USER,
      name: 'bootstrap admin key',
      hash,
      hint: hintOf(secret),
      created_at: now.toISOString(),
      expires_at: null,
      revoked_at: null,
    });
  } catch (error) {
    // Gateways starting together race to add the same key: the loser finds it there, and is done.
    if (!(error instanceof ConflictError) || (await accounts.findKey(hash))?.user.id !== BOOTSTRAP_USER) throw error;
  }
}

/**
 * Makes the config file's users exist as declared (their spec replaced; their money and usage
 * kept) with the keys listed. Keys are found by hash, so restarting adds nothing twice.
 */
export async function seedUsers(accounts: AccountStore, teams: readonly TeamSpec[], users: readonly FileUser[], now: Date): Promise<void> {
  for (const team of teams) {
    if (await accounts.getTeam(team.id)) await accounts.updateTeam(team);
    else await accounts.createTeam(team, now);
  }
  for (const { spec, keys } of users) {
    if (await accounts.getUser(spec.id)) await accounts.updateUser(spec);
    else await accounts.createUser(spec, now);
    for (const key of keys) {
      const hash = hashKey(key.secret);
      const existing = await accounts.findKey(hash);
      if (existing && existing.user.id !== spec.id)
        throw new Error(`the key "${key.name}" of user ${spec.id} in the config file belongs to user ${existing.user.id}`);
      const limits = keyLimitsOf(key);
      if (existing) {
        if (!isDeepStrictEqual(keyLimitsOf(existing.key), limits)) await accounts.updateKey(spec.id, existing.key.id, limits);
        continue;
      }
      await accounts.addKey({
        ...limits,
        id: `file-${hash.slice(0, 12)}`,
        user_id: spec.id,
        name: key.name,
        hash,
        hint: hintOf(key.secret),
        created_at: now.toISOString(),
        expires_at: null,
        revoked_at: null,
      });
    }
  }
}

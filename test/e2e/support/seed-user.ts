// A user with one API key, written straight into Redis as the operator would from a GatewayUser:
// the Kubernetes-mode tests' callers, without a GatewayUser's round trip through the operator.
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { RedisStore } from '../../../core/store/redis/redis-store.ts';

/** Creates user `id` (no team, budget or limits unless given) with one key `k1`; returns the key's secret. */
export async function seedUserWithKey(
  store: RedisStore,
  id: string,
  role: 'admin' | 'user',
  money: { budget: string; budget_period: 'monthly' | 'daily' } | undefined = undefined,
): Promise<string> {
  const key = generateKey();
  const now = new Date();
  await store.accounts.createUser(
    {
      id,
      name: id[0]!.toUpperCase() + id.slice(1),
      role,
      team: null,
      budget: money?.budget ?? null,
      budget_period: money?.budget_period ?? null,
      allowed_routers: null,
      budget_alerts: null,
      soft_budget: false,
      priority: 0,
      rate_limits: null,
      subjects: null,
    },
    now,
  );
  await store.accounts.addKey({
    id: 'k1',
    user_id: id,
    name: 'e2e',
    hash: key.hash,
    hint: key.hint,
    created_at: now.toISOString(),
    expires_at: null,
    revoked_at: null,
  });
  return key.secret;
}

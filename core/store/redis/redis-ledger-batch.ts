// The ledger's batches: the admissions and settlements of one turn of the event loop go to Redis
// in one call of lua/ledger.lua, as one JSON argument, and each gets its own part of the one JSON
// reply (lua/ledger-common.lua says why).
import { subjectOf, type OtherLevel } from '../ledger.ts';
import { levelKeys } from './keys.ts';
import type { AdmitStep } from './redis-ledger-admission.ts';
import { limitsOf } from './redis-ledger-common.ts';
import type { SettleStep } from './redis-ledger-settlement.ts';

/** Most admissions and settlements sent in one script call. */
export const MAX_BATCH = 128;

/** A step waiting for its batch: whose keys it uses, its kind and arguments, what to do with its reply. */
export interface Pending {
  readonly userId: string;
  /** The router whose rate-limit windows it counts in ('-' when none). */
  readonly scope: string;
  /** Its key's and team's levels, when they have budgets or limits. */
  readonly levels: readonly OtherLevel[] | undefined;
  readonly step: AdmitStep | SettleStep;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Sends a batch (the script's one argument) to Redis; resolves with the script's reply. */
export type SendBatch = (batch: string) => Promise<unknown>;

/**
 * Sends the waiting requests in one script call and hands each its own reply. Each level's keys
 * go once per batch (`k`), and each request names its sets by position (`r`: index, arguments,
 * and `x`, its other levels): the keys are most of a request's bytes, and a batch often holds
 * several requests of one user.
 */
export function runBatch(waiting: Pending[], send: SendBatch, onFailure: () => void): void {
  const batch = waiting.splice(0, waiting.length);
  if (batch.length === 0) return;
  const keySets: string[][] = [];
  const positions = new Map<string, number>();
  const keySet = (subject: string, scope: string): number => {
    const id = `${subject}\u0000${scope}`;
    let position = positions.get(id);
    if (position === undefined) {
      position = keySets.push(subjectKeys(subject, scope)); // 1-based, as Lua counts
      positions.set(id, position);
    }
    return position;
  };
  const requests = batch.map(({ userId, scope, levels, step }) => {
    const k = keySet(userId, scope);
    // Each step names the user and its levels by id: the alerts it may raise say whose they are
    // (a settlement's, and an admission's refused by a budget that ran out).
    if (levels === undefined || levels.length === 0) return { k, u: userId, ...step };
    const x = levels.map((l) => ({ k: keySet(subjectOf(l), scope), n: l.level, id: l.id, limits: limitsOf(l.policy) }));
    return { k, u: userId, ...step, x };
  });
  send(JSON.stringify({ k: keySets, r: requests })).then(
    (replies) => {
      const parsed = JSON.parse(replies as string) as unknown[];
      for (const [i, entry] of batch.entries()) entry.resolve(parsed[i]);
    },
    (error: unknown) => {
      onFailure();
      for (const entry of batch) entry.reject(error);
    },
  );
}

/** A level's key set, as lua/ledger-common.lua reads it (K). */
function subjectKeys(subject: string, scope: string): string[] {
  const k = levelKeys(subject);
  return [k.budget, k.ledger, k.holds, k.history, `${k.prefix}:rl:${scope}`];
}

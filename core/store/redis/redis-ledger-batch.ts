// The ledger's batches: the admissions and settlements of one turn of the event loop go to Redis
// in one call of lua/ledger.lua, as one JSON argument, and each gets its own part of the one JSON
// reply (lua/ledger-common.lua says why). On a Redis Cluster, one call per money home's slot
// (keys.ts MoneyHome), its keys passed as KEYS, and the budget alerts it raised come back with
// the replies, to be written to the alerts stream, which lives in another slot (onAlerts).
import { subjectOf, type OtherLevel } from '../ledger.ts';
import { levelKeys, type MoneyHome } from './keys.ts';
import { bySlot } from './redis-client.ts';
import type { AdmitStep } from './redis-ledger-admission.ts';
import { limitsOf } from './redis-ledger-common.ts';
import type { SettleStep } from './redis-ledger-settlement.ts';

/** Most admissions and settlements sent in one script call. */
export const MAX_BATCH = 128;

/** A step waiting for its batch: whose keys it uses, its kind and arguments, what to do with its reply. */
export interface Pending {
  readonly userId: string;
  /** Where its money lives on a cluster; undefined on one Redis. */
  readonly home: MoneyHome | undefined;
  /** The router whose rate-limit windows it counts in ('-' when none). */
  readonly scope: string;
  /** Its key's and team's levels, when they have budgets or limits. */
  readonly levels: readonly OtherLevel[] | undefined;
  readonly step: AdmitStep | SettleStep;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends a batch (the script's one argument) to Redis; resolves with the script's reply. `keys`,
 * on a cluster only, are the batch's keys, all in one slot, passed as KEYS (on one Redis they
 * travel in the batch, and KEYS is empty).
 */
export type SendBatch = (batch: string, keys: readonly string[]) => Promise<unknown>;

/** Budget alerts a cluster's batch raised (each JSON, as lua/ledger-common.lua raise_alerts writes them). */
export type OnAlerts = (alerts: string[]) => void;

/**
 * Sends the waiting requests: in one call on one Redis; on a cluster, one call per slot of their
 * money homes, as a script's keys must lie in one slot.
 */
export function runBatches(waiting: Pending[], send: SendBatch, onFailure: () => void, onAlerts: OnAlerts): void {
  const all = waiting.splice(0, waiting.length);
  if (all.length === 0) return;
  if (all[0]!.home === undefined) {
    runBatch(all, send, onFailure);
    return;
  }
  for (const group of bySlot(all, (entry) => levelKeys(entry.userId, entry.home).ledger)) runBatch(group, send, onFailure, onAlerts);
}

/**
 * Sends the waiting requests in one script call and hands each its own reply. Each level's keys
 * go once per batch (`k`), and each request names its sets by position (`r`: index, arguments,
 * and `x`, its other levels): the keys are most of a request's bytes, and a batch often holds
 * several requests of one user.
 */
function runBatch(batch: Pending[], send: SendBatch, onFailure: () => void, onAlerts?: OnAlerts): void {
  const keySets: string[][] = [];
  const positions = new Map<string, number>();
  const keySet = (subject: string, scope: string, home: MoneyHome | undefined): number => {
    const id = `${subject}\u0000${scope}`;
    let position = positions.get(id);
    if (position === undefined) {
      position = keySets.push(subjectKeys(subject, scope, home)); // 1-based, as Lua counts
      positions.set(id, position);
    }
    return position;
  };
  const requests = batch.map(({ userId, home, scope, levels, step }) => {
    const k = keySet(userId, scope, home);
    // Each step names the user and its levels by id: the alerts it may raise say whose they are
    // (a settlement's, and an admission's refused by a budget that ran out).
    if (levels === undefined || levels.length === 0) return { k, u: userId, ...step };
    const x = levels.map((l) => ({ k: keySet(subjectOf(l), scope, home), n: l.level, id: l.id, limits: limitsOf(l.policy) }));
    return { k, u: userId, ...step, x };
  });
  // On a cluster the keys go as KEYS: the `n` key sets (lua/ledger-common.lua reads them in sets
  // of KEY_SET_SIZE), then the settlements' marks (the failover loss bound), which their steps name.
  const sent = onAlerts
    ? send(JSON.stringify({ n: keySets.length, r: requests }), [...keySets.flat(), ...marksOf(batch)])
    : send(JSON.stringify({ k: keySets, r: requests }), []);
  sent.then(
    (replies) => {
      let parsed = JSON.parse(replies as string) as unknown[];
      if (onAlerts) {
        const [own, alerts] = parsed as [unknown[], unknown];
        parsed = own;
        // Lua's cjson writes an empty table as an object.
        if (Array.isArray(alerts) && alerts.length > 0) onAlerts(alerts as string[]);
      }
      for (const [i, entry] of batch.entries()) entry.resolve(parsed[i]);
    },
    (error: unknown) => {
      onFailure();
      for (const entry of batch) entry.reject(error);
    },
  );
}

/** A level's key set, as lua/ledger-common.lua reads it (K): KEY_SET_SIZE keys. */
function subjectKeys(subject: string, scope: string, home: MoneyHome | undefined): string[] {
  const k = levelKeys(subject, home);
  return [k.budget, k.ledger, k.holds, k.history, `${k.prefix}:rl:${scope}`];
}

/** The keys marking the batch's settlements done (lua/settle.lua `sk`), with the failover loss bound on. */
function marksOf(batch: readonly Pending[]): string[] {
  const marks: string[] = [];
  for (const { step } of batch) if ('sk' in step && typeof step.sk === 'string') marks.push(step.sk);
  return marks;
}

// Rules of routers' fallbacks, checked where routers are written (config file, admin API) and
// where the operator builds what the gateways serve: a fallback names an existing router (by name
// or alias), of a type that serves some endpoint the router is called on, and no chain of
// fallbacks leads back to where it started. The gateway follows the chains the same way
// (gateway/routing/routing-table.ts): a router's fallbacks in order, each followed by its own.
import { servesLike } from './kinds.ts';
import type { RouterSpec } from './router.ts';

export interface FallbackProblem {
  /** Index of the router in the list checked. */
  readonly router: number;
  /** Index of the fallback in its `fallbacks`. */
  readonly fallback: number;
  readonly message: string;
}

/**
 * The fallbacks that break a rule, each once. Fallbacks are taken router by router, in list
 * order: one that would close a loop with those taken before it is the one refused, so the
 * operator (which serves a router without its refused fallbacks) decides the same way every time.
 */
export function fallbackProblems(routers: readonly RouterSpec[]): FallbackProblem[] {
  const byName = new Map<string, number>();
  routers.forEach((router, i) => {
    for (const name of [router.name, ...router.aliases]) if (!byName.has(name)) byName.set(name, i);
  });
  const problems: FallbackProblem[] = [];
  const taken = routers.map(() => new Set<number>());
  routers.forEach((router, i) => {
    router.fallbacks.forEach((name, j) => {
      const target = byName.get(name);
      const why = refusal(routers, taken, i, target);
      if (why === undefined) taken[i]!.add(target!);
      else problems.push({ router: i, fallback: j, message: `fallback "${name}" of router "${router.name}" ${why}` });
    });
  });
  return problems;
}

/** Why router `i` may not fall back to router `target` (its index; undefined: no such router), given the fallbacks taken so far; undefined when it may. */
function refusal(routers: readonly RouterSpec[], taken: readonly Set<number>[], i: number, target: number | undefined): string | undefined {
  if (target === undefined) return 'does not exist';
  const router = routers[i]!;
  const fallback = routers[target]!;
  if (target === i) return 'is the router itself';
  if (!servesLike(router.type, fallback.type)) return `is of type ${fallback.type}, which serves no endpoint a ${router.type} router does`;
  if (taken[i]!.has(target)) return 'is listed twice';
  const path = pathBetween(taken, target, i);
  if (path) return `would close a loop: ${[i, ...path].map((k) => routers[k]!.name).join(' → ')}`;
  return undefined;
}

/** The routers from `from` to `to` along fallbacks taken so far (both ends included), if any. */
function pathBetween(taken: readonly Set<number>[], from: number, to: number): number[] | undefined {
  const cameFrom = new Map<number, number>([[from, from]]);
  const queue = [from];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next === to) {
      const path = [to];
      for (let at = to; at !== from; at = cameFrom.get(at)!) path.unshift(cameFrom.get(at)!);
      return path;
    }
    for (const target of taken[next]!) {
      if (cameFrom.has(target)) continue;
      cameFrom.set(target, next);
      queue.push(target);
    }
  }
  return undefined;
}

/** The routers with the fallbacks that break a rule left out (what the operator serves). */
export function withoutRefusedFallbacks(routers: readonly RouterSpec[], problems: readonly FallbackProblem[]): RouterSpec[] {
  if (problems.length === 0) return [...routers];
  return routers.map((router, i) => {
    const refused = new Set(problems.filter((p) => p.router === i).map((p) => p.fallback));
    return refused.size === 0 ? router : { ...router, fallbacks: router.fallbacks.filter((_, j) => !refused.has(j)) };
  });
}

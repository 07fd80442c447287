// Rules that span resources: names and aliases are unique across routers, provider ids are
// unique, every provider names an existing router, and fallbacks follow their rules (fallbacks.ts). Each problem carries a path into the
// snapshot so callers (config file, admin API) can point at the offending field.
import type { RouterSpec } from './router.ts';
import type { ProviderSpec } from './provider.ts';
import { fallbackProblems } from './fallbacks.ts';

export interface Conflict {
  path: (string | number)[];
  message: string;
}

export function findConflicts(routers: readonly RouterSpec[], providers: readonly ProviderSpec[]): Conflict[] {
  const conflicts: Conflict[] = [];
  const owners = new Map<string, number>(); // called name -> index of the router that owns it
  routers.forEach((router, i) => {
    const names: [string, (string | number)[]][] = [
      [router.name, ['routers', i, 'name']],
      ...router.aliases.map((alias, j): [string, (string | number)[]] => [alias, ['routers', i, 'aliases', j]]),
    ];
    for (const [name, path] of names) {
      const owner = owners.get(name);
      if (owner === undefined) owners.set(name, i);
      else if (owner === i) conflicts.push({ path, message: `"${name}" is listed twice for this router` });
      else conflicts.push({ path, message: `"${name}" is already used by router "${routers[owner]?.name}"` });
    }
  });
  for (const problem of fallbackProblems(routers))
    conflicts.push({ path: ['routers', problem.router, 'fallbacks', problem.fallback], message: problem.message });
  const providerIds = new Set<string>();
  providers.forEach((provider, i) => {
    if (providerIds.has(provider.id))
      conflicts.push({ path: ['providers', i, 'id'], message: `provider id "${provider.id}" is used twice` });
    providerIds.add(provider.id);
    if (!routers.some((r) => r.name === provider.router)) {
      conflicts.push({ path: ['providers', i, 'router'], message: `router "${provider.router}" does not exist` });
    }
  });
  return conflicts;
}

/** `models[2].providers[0].args.api_url` from ['models', 2, 'providers', 0, 'args', 'api_url']. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

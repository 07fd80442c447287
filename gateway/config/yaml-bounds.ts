// Bounds on a parsed YAML document, checked before anything walks it. A YAML alias (`*a`) stands
// for its anchored node, which js-yaml shares instead of copying; whatever walks the result
// (environment substitution, validation) copies it out in full. So a few hundred bytes of
// aliases of aliases stand for billions of values (a 391-byte file froze the gateway for 15 s
// and took 3.7 GB), and an alias inside its own anchor (`a: &x [*x]`) for an endless one.
// This walk stops at the first value past the bound, so it costs at most that many steps.

/** Most values (scalars, lists, maps) a configuration file may stand for, aliases expanded. */
export const MAX_VALUES = 100_000;
/** Deepest nesting of lists and maps; a configuration file needs fewer than 10 levels. */
export const MAX_DEPTH = 64;

/** What is wrong with the expanded size or shape of `document`, or undefined when nothing. */
export function expansionProblem(document: unknown, maxValues = MAX_VALUES, maxDepth = MAX_DEPTH): string | undefined {
  let values = 0;
  /** The lists and maps enclosing the current one: meeting one again is a cycle. */
  const enclosing = new Set<object>();
  const visit = (node: unknown, depth: number): string | undefined => {
    if (++values > maxValues) return `stands for more than ${maxValues} values once its aliases (*name) are expanded`;
    if (node === null || typeof node !== 'object') return undefined;
    if (enclosing.has(node)) return 'has an alias (*name) inside the node it refers to, which would repeat forever';
    if (depth >= maxDepth) return `is nested more than ${maxDepth} levels deep`;
    enclosing.add(node);
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      const problem = visit(child, depth + 1);
      if (problem) return problem;
    }
    enclosing.delete(node);
    return undefined;
  };
  return visit(document, 0);
}

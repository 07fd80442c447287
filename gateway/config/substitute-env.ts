// `${VAR}` and `${VAR:-default}` in the string values of a parsed config, so secrets stay in the
// environment. Substitution happens after YAML parsing, so a value can never break the syntax;
// a value that is a single reference is re-read as a YAML scalar (`timeout: ${T:-30}` is a number).
import { load } from 'js-yaml';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export interface SubstitutionProblem {
  path: (string | number)[];
  message: string;
}

export function substituteEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  problems: SubstitutionProblem[],
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') return substituteString(value, env, problems, path);
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, problems, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteEnv(item, env, problems, [...path, key])]));
  }
  return value;
}

function substituteString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: SubstitutionProblem[],
  path: (string | number)[],
): unknown {
  if (!text.includes('${')) return text;
  const result = text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    problems.push({ path, message: `environment variable ${name} is not set (write \${${name}:-default} to give a default)` });
    return '';
  });
  if (!WHOLE_REFERENCE.test(text) || result.trim() === '') return result;
  return readScalar(result);
}

/** "30" -> 30 and "true" -> true; anything else stays the string it is. */
function readScalar(text: string): unknown {
  try {
    const scalar = load(text);
    return typeof scalar === 'number' || typeof scalar === 'boolean' ? scalar : text;
  } catch {
    return text;
  }
}

// The configuration file (spec 2.3): a `models:` list of routers, each with its providers.
// Its fields are a surface over the router and provider resources; each resource is validated by
// its own schema, and error paths are translated back into the file's own field names.
import { readFile } from 'node:fs/promises';
import { load, YAMLException } from 'js-yaml';
import { z } from 'zod';
import { RouterSpec } from '../../core/resources/router.ts';
import { ProviderSpec } from '../../core/resources/provider.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import { UserSpec } from '../../core/resources/user.ts';
import { TeamSpec } from '../../core/resources/team.ts';
import { KeyLimits } from '../../core/resources/key-limits.ts';
import { KEY_PREFIX } from '../../core/accounts/api-keys.ts';
import { findConflicts, formatPath } from '../../core/resources/consistency.ts';
import { serviceRefOutsideKubernetes } from '../../core/resources/service-ref.ts';
import { substituteEnv, type SubstitutionProblem } from './substitute-env.ts';
import { snapshotVersion } from '../../core/resources/snapshot-version.ts';
import { expansionProblem } from './yaml-bounds.ts';

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`Invalid configuration in ${file}:\n${problems.map((p) => `  ${file}: ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A user declared in the file, with the API keys (secrets, from the environment) it may use. */
export interface FileUser {
  readonly spec: UserSpec;
  /** Each key's secret and its own budget and limits (KeyLimits). */
  readonly keys: readonly ({ readonly name: string; readonly secret: string } & KeyLimits)[];
}

/** What a configuration file declares: the routing snapshot, and teams and users to make exist. */
export interface ConfigFile {
  readonly snapshot: Snapshot;
  readonly teams: readonly TeamSpec[];
  readonly users: readonly FileUser[];
}

const FileKey = z.strictObject({
  name: z.string().min(1).max(200),
  key: z
    .string()
    .startsWith(KEY_PREFIX, `must start with "${KEY_PREFIX}"`)
    .min(KEY_PREFIX.length + 32, `must have at least 32 characters after "${KEY_PREFIX}"`),
  ...KeyLimits.shape,
});

const FileShape = z.strictObject({
  teams: z.array(z.unknown()).default([]),
  users: z.array(z.looseObject({ keys: z.array(z.unknown()).default([]) })).default([]),
  models: z.array(
    z.looseObject({
      providers: z.array(z.looseObject({ args: z.record(z.string(), z.unknown()).optional() })).default([]),
    }),
  ),
});

/** Args keys that map to a provider field of another name; the rest keep their name. */
const ARG_FIELDS: Record<string, string> = {
  api_url: 'url',
  api_urls: 'urls',
  api_key: 'key',
  timeout: 'timeout',
  max_concurrent: 'max_concurrent',
};
const SIMULATOR_ARGS = new Set(['latency_ms', 'tokens_per_second', 'completion_tokens']);
const ROUTER_FIELDS: Record<string, string> = { id: 'name' };

export async function loadConfigFile(file: string, env: Readonly<Record<string, string | undefined>>): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, [`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`]);
  }
  return parseConfig(file, text, env);
}

export function parseConfig(file: string, text: string, env: Readonly<Record<string, string | undefined>>): ConfigFile {
  let raw: unknown;
  try {
    raw = load(text, { filename: file });
  } catch (error) {
    throw new ConfigError(file, [`is not valid YAML: ${yamlReason(error)}`]);
  }
  const tooBig = expansionProblem(raw);
  if (tooBig) throw new ConfigError(file, [tooBig]);
  const envProblems: SubstitutionProblem[] = [];
  const substituted = substituteEnv(raw ?? {}, env, envProblems);
  const problems = envProblems.map((p) => `${formatPath(p.path)}: ${p.message}`);

  const shape = FileShape.safeParse(substituted);
  if (!shape.success) throw new ConfigError(file, [...problems, ...issuesToLines(shape.error.issues, [])]);

  const routers: RouterSpec[] = [];
  const providers: ProviderSpec[] = [];
  const providerPaths: (string | number)[][] = [];
  shape.data.models.forEach((model, i) => {
    const { providers: entries, ...routerFields } = model;
    const router = RouterSpec.safeParse(renameKeys(routerFields, ROUTER_FIELDS));
    if (!router.success) problems.push(...issuesToLines(router.error.issues, ['models', i], invert(ROUTER_FIELDS)));
    else routers.push(router.data);
    if (entries.length === 0) problems.push(`${formatPath(['models', i, 'providers'])}: a model needs at least one provider`);
    entries.forEach((entry, j) => {
      const path = ['models', i, 'providers', j];
      const provider = ProviderSpec.safeParse(providerInput(entry, String(model.id ?? ''), `${String(model.id ?? 'model')}-${j}`));
      // A model without a valid id is reported once, at its id, not again at each provider.
      const issues = provider.success ? [] : provider.error.issues.filter((issue) => router.success || issue.path[0] !== 'router');
      if (!provider.success) problems.push(...issuesToLines(issues, path, PROVIDER_PATHS));
      else {
        providers.push(provider.data);
        providerPaths.push(path);
      }
    });
  });
  const teams = parseTeams(shape.data.teams, problems);
  const users = parseUsers(shape.data.users, problems, new Set(teams.map((t) => t.id)));
  const named = serviceRefOutsideKubernetes(providers);
  if (named) problems.push(`${formatPath([...(providerPaths[named.index] ?? []), 'service_ref'])}: ${named.message}`);
  if (problems.length === 0) {
    for (const conflict of findConflicts(routers, providers)) {
      problems.push(`${formatPath(fileConflictPath(conflict.path, providerPaths))}: ${conflict.message}`);
    }
  }
  // A variable that is not set also fails its field's schema; say it once.
  const unset = new Set(envProblems.map((p) => formatPath(p.path)));
  const distinct = problems.filter((line, i) => i < envProblems.length || !unset.has(line.slice(0, line.indexOf(': '))));
  if (distinct.length > 0) throw new ConfigError(file, distinct);
  const content = { routers, providers };
  return { snapshot: { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content }, teams, users };
}

function parseTeams(entries: readonly unknown[], problems: string[]): TeamSpec[] {
  const teams: TeamSpec[] = [];
  entries.forEach((entry, i) => {
    const team = TeamSpec.safeParse(entry);
    if (!team.success) problems.push(...issuesToLines(team.error.issues, ['teams', i]));
    else if (teams.some((t) => t.id === team.data.id))
      problems.push(`${formatPath(['teams', i, 'id'])}: team id "${team.data.id}" is used twice`);
    else teams.push(team.data);
  });
  return teams;
}

function parseUsers(entries: readonly Record<string, unknown>[], problems: string[], teams: ReadonlySet<string>): FileUser[] {
  const users: FileUser[] = [];
  const ids = new Set<string>();
  entries.forEach((entry, i) => {
    const { keys: rawKeys, ...fields } = entry as { keys: unknown[] };
    const spec = UserSpec.safeParse(fields);
    if (!spec.success) problems.push(...issuesToLines(spec.error.issues, ['users', i]));
    const keys = rawKeys.flatMap((rawKey, j) => {
      const key = FileKey.safeParse(rawKey);
      if (key.success) {
        const { key: secret, ...rest } = key.data;
        return [{ ...rest, secret }];
      }
      problems.push(...issuesToLines(key.error.issues, ['users', i, 'keys', j]));
      return [];
    });
    if (!spec.success) return;
    if (spec.data.team !== null && !teams.has(spec.data.team))
      problems.push(`${formatPath(['users', i, 'team'])}: team "${spec.data.team}" is not declared under teams`);
    if (ids.has(spec.data.id)) problems.push(`${formatPath(['users', i, 'id'])}: user id "${spec.data.id}" is used twice`);
    ids.add(spec.data.id);
    users.push({ spec: spec.data, keys });
  });
  return users;
}

/** One line: the parser's reason and where, without the multi-line source snippet. */
/** What is wrong with a YAML text, where js-yaml found it. */
export function yamlReason(error: unknown): string {
  if (!(error instanceof YAMLException)) return String(error);
  const mark = error.mark;
  return mark ? `${error.reason} (line ${mark.line + 1}, column ${mark.column + 1})` : error.reason;
}

/** The provider resource a file entry describes: `model` is model_name, args hold url (or urls, several replicas)/key/timeout. */
function providerInput(entry: Record<string, unknown>, router: string, defaultId: string): Record<string, unknown> {
  const { model, args, ...rest } = entry as { model?: unknown; args?: Record<string, unknown> };
  const input: Record<string, unknown> = { id: defaultIdFor(defaultId), ...rest, router, model_name: model };
  const simulator: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args ?? {})) {
    if (entry.type === 'simulator' && SIMULATOR_ARGS.has(key)) simulator[key] = value;
    else input[ARG_FIELDS[key] ?? `args.${key}`] = value;
  }
  if (Object.keys(simulator).length > 0) input.simulator = simulator;
  return input;
}

/** Provider ids default to `<router>-<index>`, lowercased into an id-safe form. */
function defaultIdFor(candidate: string): string {
  return (
    candidate
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'provider'
  );
}

/** Maps a provider resource's error path back to the file's field names. */
function PROVIDER_PATHS(path: readonly PropertyKey[]): PropertyKey[] {
  const [head, ...tail] = path;
  if (head === 'model_name') return ['model', ...tail];
  if (head === 'url') return ['args', 'api_url', ...tail];
  if (head === 'urls') return ['args', 'api_urls', ...tail];
  if (head === 'key') return ['args', 'api_key', ...tail];
  if (head === 'timeout') return ['args', 'timeout', ...tail];
  if (head === 'simulator') return ['args', ...tail];
  if (typeof head === 'string' && head.startsWith('args.')) return ['args', head.slice(5), ...tail];
  return [...path];
}

function invert(names: Record<string, string>): (path: readonly PropertyKey[]) => PropertyKey[] {
  const back = Object.fromEntries(Object.entries(names).map(([a, b]) => [b, a]));
  return (path) => {
    if (path.length === 0) return [];
    const [head, ...tail] = path;
    return [typeof head === 'string' ? (back[head] ?? head) : head!, ...tail];
  };
}

function renameKeys(value: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [names[k] ?? k, v]));
}

function fileConflictPath(path: (string | number)[], providerPaths: (string | number)[][]): (string | number)[] {
  const [kind, index, field, ...rest] = path;
  if (kind === 'routers') return ['models', index as number, field === 'name' ? 'id' : (field as string), ...rest];
  return [...(providerPaths[index as number] ?? ['providers', index as number]), field as string, ...rest];
}

/** Zod's issues as lines `<path>: <problem>`, each path under `prefix` (and renamed by `mapPath`). */
export function issuesToLines(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[],
  mapPath: (path: readonly PropertyKey[]) => PropertyKey[] = (p) => [...p],
): string[] {
  return issues.map((issue) => {
    const path = [...prefix, ...mapPath(issue.path)];
    return `${formatPath(path) || '(top level)'}: ${describeIssue(issue)}`;
  });
}

/** Zod's message, made to say what the valid values are when the problem is an unknown one. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    const options = (issue as { options?: unknown[] }).options;
    return `unknown ${issue.discriminator}${options ? `; valid ${issue.discriminator}s are ${options.join(', ')}` : ''}`;
  }
  return issue.message;
}

// Lua scripts from lua/<name>.lua, registered on a client with defineCommand: ioredis sends
// EVALSHA, and EVAL when Redis answers NOSCRIPT (a restarted or flushed server), so callers
// never see a missing script. The one loader of every script: Redis scripts cannot import one
// another, so a script made of several files (the ledger) names the ones loaded before it, and
// constants declared in TypeScript reach it as a prelude of Lua written from them.
import { readFileSync } from 'node:fs';
import type { ChainableCommander, Redis } from 'ioredis';

type Arg = string | number;
type Command = (...args: Arg[]) => unknown;

export interface LuaScript {
  /** Runs the script: keys first, then arguments, as the script's header lists them. */
  run(...args: Arg[]): Promise<unknown>;
  /** Queues the script on a pipeline (its reply comes back with the pipeline's). */
  queue(pipeline: ChainableCommander, ...args: Arg[]): void;
  /** Runs a script defined without a fixed number of keys. */
  runWithKeys(keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
}

export interface ScriptParts {
  /** Lua run first: constants written from TypeScript declarations. */
  readonly prelude?: string;
  /** Files of lua/ loaded before the script's own, in order: the functions it calls. */
  readonly before?: readonly string[];
}

const source = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/** `numberOfKeys` undefined: the script takes a varying number of keys (see runWithKeys). */
export function defineScript(redis: Redis, name: string, numberOfKeys?: number, parts: ScriptParts = {}): LuaScript {
  const lua = [parts.prelude ?? '', ...(parts.before ?? []).map(source), source(name)].join('\n');
  const command = `tollgate_${name.replaceAll('-', '_')}`;
  redis.defineCommand(command, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
  const onClient = commandOf(redis, command);
  return {
    run: (...args) => onClient.call(redis, ...args) as Promise<unknown>,
    queue: (pipeline, ...args) => void commandOf(pipeline, command).call(pipeline, ...args),
    runWithKeys: (keys, args) => onClient.call(redis, keys.length, ...keys, ...args) as Promise<unknown>,
  };
}

function commandOf(target: object, command: string): Command {
  const found = (target as Record<string, unknown>)[command];
  if (typeof found !== 'function') throw new TypeError(`Redis script ${command} is not defined on this client`);
  return found as Command;
}

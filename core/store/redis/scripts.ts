// Lua scripts from lua/<name>.lua, registered on a client with defineCommand (or sent by their
// digest, scriptBySha): EVALSHA, and EVAL when Redis answers NOSCRIPT (a restarted or flushed
// server), so callers never see a missing script. The one loader of every script: Redis scripts cannot import one
// another, so a script made of several files (the ledger) names the ones loaded before it, and
// constants declared in TypeScript reach it as a prelude of Lua written from them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-client.ts';

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

const text = (name: string, parts: ScriptParts) => [parts.prelude ?? '', ...(parts.before ?? []).map(source), source(name)].join('\n');

/** `numberOfKeys` undefined: the script takes a varying number of keys (see runWithKeys). */
export function defineScript(redis: RedisClient, name: string, numberOfKeys?: number, parts: ScriptParts = {}): LuaScript {
  const lua = text(name, parts);
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

/** A script's whole text and its digest, for a caller that sends it itself (EVALSHA, then EVAL on NOSCRIPT). */
export interface ScriptSource {
  readonly lua: string;
  readonly sha: string;
}

/** The text of lua/<name>.lua with its parts, and its digest. */
export function scriptSource(name: string, parts: ScriptParts = {}): ScriptSource {
  const lua = text(name, parts);
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * A script sent by its digest (EVALSHA, then EVAL when Redis answers NOSCRIPT) without being
 * defined on the client: for a few calls off the request path on the shared client, where every
 * script defined is copied onto each pipeline and transaction the ledger and the usage log make.
 */
export function scriptBySha(redis: RedisClient, name: string, numberOfKeys: number, parts: ScriptParts = {}): Pick<LuaScript, 'run'> {
  const { lua, sha } = scriptSource(name, parts);
  return {
    async run(...args) {
      try {
        return await redis.evalsha(sha, numberOfKeys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await redis.eval(lua, numberOfKeys, ...args);
      }
    },
  };
}

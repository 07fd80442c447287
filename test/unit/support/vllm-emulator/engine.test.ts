// The emulated engine's scheduler on a virtual clock: prefix hits and what they save, LRU
// eviction of cached blocks, queueing when the KV cache is full, fcfs and priority order, decode
// slowing as the batch grows, and a cancelled request giving its blocks back. Times are exact:
// the clock fires each timer at the instant the engine asked for.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Engine, type EngineRequest, type RequestOutcome } from '../../../support/vllm-emulator/engine.ts';
import { blockHashes } from '../../../support/vllm-emulator/prefix-cache.ts';
import { type EmulatorSettingsInput, parseSettings } from '../../../support/vllm-emulator/settings.ts';
import { VirtualClock } from './virtual-clock.ts';

/** 1 token per ms of prefill, 10 tokens/s of decode alone, blocks of 16, no floor on steps. */
function engineWith(overrides: EmulatorSettingsInput = {}) {
  const clock = new VirtualClock();
  const settings = parseSettings({
    kv_blocks: 100,
    max_num_seqs: 8,
    max_model_len: 256,
    prefill_tps: 1000,
    decode_tps: 10,
    batch_slowdown: 0,
    min_step_ms: 0,
    ...overrides,
  });
  return { clock, engine: new Engine(settings, clock) };
}

/** `length` token ids; prompts made with the same `seed` share their prefix. */
function tokens(length: number, seed: number): number[] {
  return Array.from({ length }, (_, i) => seed * 100_000 + i);
}

function request(prompt: number[], maxTokens: number, priority = 0): EngineRequest {
  return { promptTokens: prompt.length, blockHashes: blockHashes(prompt, 16), maxTokens, priority };
}

interface Traced {
  admittedAt?: number;
  firstTokenAt?: number;
  finishedAt?: number;
  outcome?: RequestOutcome;
}

/** Submits and records when the request was admitted, made its first token and finished. */
function traced(engine: Engine, clock: VirtualClock, req: EngineRequest, log: string[] = [], name = '') {
  const trace: Traced = {};
  const handle = engine.submit(req, {
    admitted: () => {
      trace.admittedAt = clock.now();
      log.push(name);
    },
    tokens: () => {
      trace.firstTokenAt ??= clock.now();
    },
    finished: (outcome) => {
      trace.finishedAt = clock.now();
      trace.outcome = outcome;
    },
  });
  return { trace, handle };
}

describe('prefix cache hits', () => {
  test('a prompt sharing whole blocks with a finished one has them cached, and prefills only the rest', () => {
    const { clock, engine } = engineWith();
    const first = traced(engine, clock, request(tokens(100, 1), 4));
    clock.runAll();
    assert.deepEqual(first.trace.outcome, { promptTokens: 100, cachedTokens: 0, completionTokens: 4 });
    // The same first 70 tokens, then others: 4 whole blocks (64 tokens) in common.
    const second = traced(engine, clock, request([...tokens(70, 1), ...tokens(30, 2)], 4));
    const submittedAt = clock.now();
    clock.runAll();
    assert.equal(second.trace.outcome?.cachedTokens, 64);
    assert.equal(second.trace.firstTokenAt! - submittedAt, 36, '36 uncached tokens at 1 per ms');
    assert.deepEqual(engine.totals.promptTokens, 200);
    assert.deepEqual(engine.totals.cachedPromptTokens, 64);
  });

  test('the same prompt again hits every whole block but the one holding its last token', () => {
    const { clock, engine } = engineWith();
    for (const [prompt, cached] of [
      [64, 48],
      [65, 64],
      [15, 0],
    ] as const) {
      traced(engine, clock, request(tokens(prompt, prompt), 2));
      clock.runAll();
      const again = traced(engine, clock, request(tokens(prompt, prompt), 2));
      clock.runAll();
      assert.equal(again.trace.outcome?.cachedTokens, cached, `a prompt of ${prompt} tokens`);
    }
  });

  test('requests that differ in their first block share nothing', () => {
    const { clock, engine } = engineWith();
    traced(engine, clock, request(tokens(64, 1), 2));
    clock.runAll();
    const other = [7, ...tokens(63, 1).slice(1)];
    const second = traced(engine, clock, request(other, 2));
    clock.runAll();
    assert.equal(second.trace.outcome?.cachedTokens, 0);
  });
});

describe('LRU eviction', () => {
  // 12 blocks; each request reserves 5 (65 prompt + 15 completion tokens) and leaves 4 named
  // prompt blocks cached. After X and Y, 8 are cached and 4 empty: Z takes the 4 and evicts 1,
  // the least recently freed, a tail block (a request frees its prompt's tail first).
  for (const { name, order, evicted, kept } of [
    { name: 'the prompt used longest ago loses its tail block', order: ['X', 'Y'], evicted: 'X', kept: 'Y' },
    { name: 'a prompt used again moves to the back of the line', order: ['X', 'Y', 'X'], evicted: 'Y', kept: 'X' },
  ]) {
    test(name, () => {
      const { clock, engine } = engineWith({ kv_blocks: 12, max_model_len: 192 });
      const prompts: Record<string, number[]> = { X: tokens(65, 1), Y: tokens(65, 2), Z: tokens(65, 3) };
      for (const key of [...order, 'Z']) {
        traced(engine, clock, request(prompts[key]!, 15));
        clock.runAll();
      }
      assert.equal(engine.cachedBlocks, 11);
      // The kept prompt first: it needs only the one empty block, so it evicts nothing itself.
      const keptAgain = traced(engine, clock, request(prompts[kept]!, 15));
      clock.runAll();
      const evictedAgain = traced(engine, clock, request(prompts[evicted]!, 15));
      clock.runAll();
      assert.equal(evictedAgain.trace.outcome?.cachedTokens, 48, `${evicted} lost one block`);
      assert.equal(keptAgain.trace.outcome?.cachedTokens, 64, `${kept} kept all four`);
    });
  }
});

describe('queueing', () => {
  test('a request that does not fit in the KV cache waits until blocks are freed, in arrival order', () => {
    // 10 blocks, 5 per request: two run, the rest wait.
    const { clock, engine } = engineWith({ kv_blocks: 10, max_model_len: 160 });
    const log: string[] = [];
    const runs = ['a', 'b', 'c', 'd'].map((name, i) => traced(engine, clock, request(tokens(64, i + 1), 16), log, name));
    assert.deepEqual(engine.state(), { running: 2, waiting: 2, kvUsage: 1 });
    assert.deepEqual(log, ['a', 'b']);
    clock.runAll();
    assert.deepEqual(log, ['a', 'b', 'c', 'd']);
    assert.ok(runs[2]!.trace.admittedAt! >= runs[0]!.trace.finishedAt!, 'c was admitted when a finished');
    assert.equal(engine.totals.peakWaiting, 2);
    assert.equal(engine.totals.peakRunning, 2);
    assert.deepEqual(engine.state(), { running: 0, waiting: 0, kvUsage: 0 });
  });

  test('the batch limit holds requests back even when blocks are free', () => {
    const { clock, engine } = engineWith({ max_num_seqs: 2 });
    for (let i = 0; i < 5; i++) traced(engine, clock, request(tokens(20, i), 3));
    assert.equal(engine.state().running, 2);
    assert.equal(engine.state().waiting, 3);
    clock.runAll();
    assert.equal(engine.totals.completed, 5);
  });

  for (const { policy, admitted } of [
    { policy: 'fcfs' as const, admitted: ['first', 'low', 'high', 'high too'] },
    { policy: 'priority' as const, admitted: ['first', 'high', 'high too', 'low'] },
  ]) {
    test(`under ${policy}, waiting requests are admitted in the order ${admitted.join(', ')}`, () => {
      const { clock, engine } = engineWith({ max_num_seqs: 1, scheduling_policy: policy });
      const log: string[] = [];
      traced(engine, clock, request(tokens(20, 1), 3, 0), log, 'first');
      traced(engine, clock, request(tokens(20, 2), 3, policy === 'priority' ? 5 : 0), log, 'low');
      traced(engine, clock, request(tokens(20, 3), 3, policy === 'priority' ? -1 : 0), log, 'high');
      traced(engine, clock, request(tokens(20, 4), 3, policy === 'priority' ? -1 : 0), log, 'high too');
      clock.runAll();
      assert.deepEqual(log, admitted);
    });
  }
});

describe('timing', () => {
  test('decode slows as the batch grows: decode_tps / (1 + slowdown x (running - 1))', () => {
    const alone = engineWith({ batch_slowdown: 0.5 });
    const single = traced(alone.engine, alone.clock, request(tokens(16, 1), 11));
    alone.clock.runAll();
    // 16 ms of prefill, then 10 more tokens at 10/s.
    assert.equal(single.trace.firstTokenAt, 16);
    assert.ok(Math.abs(single.trace.finishedAt! - 1016) < 1e-6, String(single.trace.finishedAt));

    const paired = engineWith({ batch_slowdown: 0.5 });
    const a = traced(paired.engine, paired.clock, request(tokens(16, 1), 11));
    const b = traced(paired.engine, paired.clock, request(tokens(16, 2), 11));
    paired.clock.runAll();
    // Prefills run one after the other; both decode at 10 / 1.5 tokens/s while both run, and b
    // at 10/s once a has finished.
    assert.equal(a.trace.firstTokenAt, 16);
    assert.equal(b.trace.firstTokenAt, 32);
    assert.ok(Math.abs(a.trace.finishedAt! - 1516) < 1e-6, String(a.trace.finishedAt));
    const bTokensWhenAFinished = 1 + ((1516 - 32) / 1000) * (10 / 1.5);
    const bFinish = 1516 + ((11 - bTokensWhenAFinished) / 10) * 1000;
    assert.ok(Math.abs(b.trace.finishedAt! - bFinish) < 1e-6, `${b.trace.finishedAt} ≠ ${bFinish}`);
  });

  test('time_scale multiplies every duration', () => {
    const { clock, engine } = engineWith({ time_scale: 0.01 });
    const run = traced(engine, clock, request(tokens(200, 1), 11));
    clock.runAll();
    assert.ok(Math.abs(run.trace.firstTokenAt! - 2) < 1e-9, '200 ms of prefill in 2 ms');
    assert.ok(Math.abs(run.trace.finishedAt! - 12) < 1e-9, '1 s of decode in 10 ms');
  });

  test('tokens are reported one by one to a stream, the last with the finish', () => {
    const { clock, engine } = engineWith();
    const counts: number[] = [];
    let finished = 0;
    engine.submit(request(tokens(16, 1), 5), { tokens: (n) => void counts.push(n), finished: () => void finished++ });
    clock.runAll();
    assert.deepEqual(counts, [1, 2, 3, 4, 5]);
    assert.equal(finished, 1);
  });
});

describe('cancel', () => {
  test('a cancelled request frees its blocks, and the next in line runs', () => {
    const { clock, engine } = engineWith({ kv_blocks: 10, max_model_len: 160 });
    const first = traced(engine, clock, request(tokens(64, 1), 16));
    traced(engine, clock, request(tokens(64, 2), 16));
    const third = traced(engine, clock, request(tokens(64, 3), 16));
    clock.advance(100);
    first.handle.cancel();
    first.handle.cancel();
    assert.equal(third.trace.admittedAt, 100);
    assert.equal(engine.totals.cancelled, 1);
    clock.runAll();
    assert.equal(first.trace.finishedAt, undefined, 'no answer for a cancelled request');
    assert.deepEqual(engine.state(), { running: 0, waiting: 0, kvUsage: 0 });
  });

  test('a cancelled request that was waiting leaves the queue', () => {
    const { clock, engine } = engineWith({ max_num_seqs: 1 });
    traced(engine, clock, request(tokens(20, 1), 3));
    const waiting = traced(engine, clock, request(tokens(20, 2), 3));
    waiting.handle.cancel();
    assert.equal(engine.state().waiting, 0);
    clock.runAll();
    assert.equal(waiting.trace.admittedAt, undefined);
  });
});

// The emulated engine's scheduler: what decides, in vLLM, when a request runs and how long it
// takes, which is what engine-aware routing reads and acts on. Requests wait in a queue (arrival
// order, or priority then arrival) until the running batch has a seat and the KV cache has the
// blocks for their prompt and their whole completion (cached prompt blocks are shared, not
// taken again); the head of the queue blocks those behind it, as in vLLM. Admitted requests
// prefill one after another at the engine's prefill rate (only their uncached tokens), then
// decode side by side, each at a rate that falls as the batch grows. Time is the injected
// clock's: the engine does work only when a timer it set fires or a request comes or goes, so a
// test drives it by hand and the server runs it on Node's timers.
import { realTimers, type Timers } from '../../../core/timers.ts';
import { BlockPool, type BlockLease } from './prefix-cache.ts';
import type { EmulatorSettings } from './settings.ts';

export interface EngineClock extends Timers {
  /** Milliseconds, monotonic. */
  now(): number;
}

export const realClock: EngineClock = { now: () => performance.now(), ...realTimers };

export interface EngineRequest {
  readonly promptTokens: number;
  /** The hash chain of the prompt's full blocks (prefix-cache.ts blockHashes). */
  readonly blockHashes: readonly string[];
  /** Completion tokens to generate, at least 1. */
  readonly maxTokens: number;
  /** Lower runs first under the priority policy; ignored under fcfs. */
  readonly priority: number;
}

export interface RequestOutcome {
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
}

export interface RequestEvents {
  /** Taken into the running batch, with this many prompt tokens found in the prefix cache. */
  admitted?(cachedTokens: number): void;
  /** Tokens generated so far, each time the count grows (the first at the end of prefill). Only asked by streams. */
  tokens?(generated: number): void;
  finished(outcome: RequestOutcome): void;
}

export interface EngineState {
  readonly running: number;
  readonly waiting: number;
  /** Blocks held by requests over all blocks, 0..1 (cached free blocks are not in use). */
  readonly kvUsage: number;
}

export interface EngineTotals {
  submitted: number;
  completed: number;
  cancelled: number;
  /** Prompt tokens of admitted requests: vLLM's prefix-cache queries, in tokens. */
  promptTokens: number;
  /** Of those, found in the prefix cache: vLLM's prefix-cache hits. */
  cachedPromptTokens: number;
  generationTokens: number;
  peakWaiting: number;
  peakRunning: number;
}

/** Below this, a remainder of work is float noise, not work. */
const EPSILON = 1e-6;

interface Sequence {
  readonly order: number;
  readonly request: EngineRequest;
  readonly events: RequestEvents;
  lease?: BlockLease;
  cachedTokens: number;
  prefillLeft: number;
  generated: number;
  reported: number;
  done: boolean;
}

export interface RequestHandle {
  /** The client went away: the request leaves the queue or the batch and its blocks are freed (cached ones stay cached). */
  cancel(): void;
}

/** An engine's totals before its first request (what a fresh emulator's /metrics reports). */
export function noTotals(): EngineTotals {
  return {
    submitted: 0,
    completed: 0,
    cancelled: 0,
    promptTokens: 0,
    cachedPromptTokens: 0,
    generationTokens: 0,
    peakWaiting: 0,
    peakRunning: 0,
  };
}

export class Engine {
  readonly #settings: EmulatorSettings;
  readonly #clock: EngineClock;
  readonly #pool: BlockPool;
  readonly #waiting: Sequence[] = [];
  /** In admission order, which is also the prefill order. */
  readonly #running: Sequence[] = [];
  readonly totals: EngineTotals = noTotals();
  #nextOrder = 0;
  #lastAdvance: number;
  #timer: unknown;

  constructor(settings: EmulatorSettings, clock: EngineClock = realClock) {
    this.#settings = settings;
    this.#clock = clock;
    this.#pool = new BlockPool(settings.kv_blocks);
    this.#lastAdvance = clock.now();
  }

  /** The blocks a request reserves: its prompt and its whole completion (vLLM grows them as it decodes; see README). */
  blocksNeeded(request: Pick<EngineRequest, 'promptTokens' | 'maxTokens'>): number {
    return Math.ceil((request.promptTokens + request.maxTokens) / this.#settings.block_size);
  }

  submit(request: EngineRequest, events: RequestEvents): RequestHandle {
    if (this.blocksNeeded(request) > this.#settings.kv_blocks) throw new RangeError('the request needs more blocks than the cache has');
    if (!(request.maxTokens >= 1)) throw new RangeError('maxTokens must be at least 1');
    this.#advance();
    const sequence: Sequence = {
      order: this.#nextOrder++,
      request,
      events,
      cachedTokens: 0,
      prefillLeft: request.promptTokens,
      generated: 0,
      reported: 0,
      done: false,
    };
    this.totals.submitted++;
    this.#enqueue(sequence);
    this.totals.peakWaiting = Math.max(this.totals.peakWaiting, this.#waiting.length);
    this.#settle();
    return { cancel: () => this.#cancel(sequence) };
  }

  state(): EngineState {
    return {
      running: this.#running.length,
      waiting: this.#waiting.length,
      kvUsage: this.#pool.heldBlocks / this.#pool.totalBlocks,
    };
  }

  /** Named blocks in the prefix cache (held or free), for tests. */
  get cachedBlocks(): number {
    return this.#pool.cachedBlocks;
  }

  /** Stops the engine's timer (requests in flight get no more events). */
  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #enqueue(sequence: Sequence): void {
    if (this.#settings.scheduling_policy === 'fcfs') {
      this.#waiting.push(sequence);
      return;
    }
    const before = this.#waiting.findIndex(
      (other) =>
        other.request.priority > sequence.request.priority ||
        (other.request.priority === sequence.request.priority && other.order > sequence.order),
    );
    this.#waiting.splice(before === -1 ? this.#waiting.length : before, 0, sequence);
  }

  #cancel(sequence: Sequence): void {
    if (sequence.done) return;
    this.#advance();
    sequence.done = true;
    this.totals.cancelled++;
    const waitingAt = this.#waiting.indexOf(sequence);
    if (waitingAt !== -1) this.#waiting.splice(waitingAt, 1);
    const runningAt = this.#running.indexOf(sequence);
    if (runningAt !== -1) this.#running.splice(runningAt, 1);
    if (sequence.lease) this.#pool.release(sequence.lease);
    this.totals.generationTokens += Math.floor(sequence.generated);
    this.#settle();
  }

  /** After any change: finish what is done, admit what fits, and set the timer for the next thing to happen. */
  #settle(): void {
    this.#completePhases();
    this.#admit();
    this.#schedule();
  }

  #wake(): void {
    this.#timer = undefined;
    this.#advance();
    this.#settle();
  }

  /** Brings every running request's work up to now, at the rates that held since the last change. */
  #advance(): void {
    const now = this.#clock.now();
    const seconds = (now - this.#lastAdvance) / 1000 / this.#settings.time_scale;
    this.#lastAdvance = now;
    if (!(seconds > 0)) return;
    let prefillBudget = seconds * this.#settings.prefill_tps;
    const rate = this.#decodeRate();
    for (const sequence of this.#running) {
      if (sequence.prefillLeft > 0) {
        const taken = Math.min(prefillBudget, sequence.prefillLeft);
        sequence.prefillLeft -= taken;
        prefillBudget -= taken;
      } else {
        sequence.generated = Math.min(sequence.request.maxTokens, sequence.generated + seconds * rate);
      }
    }
  }

  /** Tokens per second each decoding sequence makes with the batch as it is now. */
  #decodeRate(): number {
    return this.#settings.decode_tps / (1 + this.#settings.batch_slowdown * Math.max(0, this.#running.length - 1));
  }

  #completePhases(): void {
    for (const sequence of [...this.#running]) {
      if (sequence.generated === 0 && sequence.prefillLeft <= EPSILON) {
        // Prefill done: its blocks are now computed and cached, and the step that ends it makes the first token.
        sequence.prefillLeft = 0;
        sequence.generated = 1;
        this.#pool.register(sequence.lease!, sequence.request.blockHashes.slice(sequence.cachedTokens / this.#settings.block_size));
      }
      if (sequence.generated > 0 && sequence.generated >= sequence.request.maxTokens - EPSILON) {
        sequence.generated = sequence.request.maxTokens;
        this.#finish(sequence);
      } else {
        this.#report(sequence);
      }
    }
  }

  #report(sequence: Sequence): void {
    const whole = Math.floor(sequence.generated + EPSILON);
    if (whole <= sequence.reported) return;
    sequence.reported = whole;
    sequence.events.tokens?.(whole);
  }

  #finish(sequence: Sequence): void {
    this.#report(sequence);
    sequence.done = true;
    this.#running.splice(this.#running.indexOf(sequence), 1);
    this.#pool.release(sequence.lease!);
    this.totals.completed++;
    this.totals.generationTokens += sequence.request.maxTokens;
    sequence.events.finished({
      promptTokens: sequence.request.promptTokens,
      cachedTokens: sequence.cachedTokens,
      completionTokens: sequence.request.maxTokens,
    });
  }

  #admit(): void {
    const blockSize = this.#settings.block_size;
    while (this.#waiting.length > 0 && this.#running.length < this.#settings.max_num_seqs) {
      const head = this.#waiting[0]!;
      const { promptTokens, blockHashes } = head.request;
      // As vLLM: at least the last prompt token is computed, so a hit stops a block short of a whole cached prompt.
      const hitBlocks = Math.min(this.#pool.cachedPrefix(blockHashes), Math.floor((promptTokens - 1) / blockSize));
      const hits = blockHashes.slice(0, hitBlocks);
      const fresh = this.blocksNeeded(head.request) - hitBlocks;
      if (!this.#pool.canLease(hits, fresh)) break;
      this.#waiting.shift();
      head.lease = this.#pool.lease(hits, fresh);
      head.cachedTokens = hitBlocks * blockSize;
      head.prefillLeft = promptTokens - head.cachedTokens;
      this.totals.promptTokens += promptTokens;
      this.totals.cachedPromptTokens += head.cachedTokens;
      this.#running.push(head);
      this.totals.peakRunning = Math.max(this.totals.peakRunning, this.#running.length);
      head.events.admitted?.(head.cachedTokens);
    }
  }

  /** One timer, for the earliest of: the prefill in progress ending, a sequence finishing, a streamed token being due. */
  #schedule(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running.length === 0) return;
    const scale = 1000 * this.#settings.time_scale;
    const rate = this.#decodeRate();
    let delayMs = Infinity;
    const prefilling = this.#running.find((sequence) => sequence.prefillLeft > 0);
    if (prefilling) delayMs = (prefilling.prefillLeft / this.#settings.prefill_tps) * scale;
    for (const sequence of this.#running) {
      if (sequence.prefillLeft > 0) continue;
      delayMs = Math.min(delayMs, ((sequence.request.maxTokens - sequence.generated) / rate) * scale);
      if (sequence.events.tokens) {
        const nextToken = ((Math.floor(sequence.generated + EPSILON) + 1 - sequence.generated) / rate) * scale;
        delayMs = Math.min(delayMs, Math.max(nextToken, this.#settings.min_step_ms));
      }
    }
    this.#timer = this.#clock.setTimeout(() => this.#wake(), Math.max(0, delayMs));
  }
}

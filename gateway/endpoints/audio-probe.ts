// Reads uploaded audio files' durations in a pool of worker threads (probe-thread.ts,
// audio-probe-worker.ts), not on the event loop: reading every frame of a 25 MB VBR MP3 without a
// Xing header took 0.4 to 0.9 s, and 1 MB of 0xFF bytes sent as an MP3 5 s, during which no other
// request was answered.
//
// Up to `workers` threads, each started when a scan finds none free and stopped after IDLE_MS
// without one, read one file each at a time; the other scans wait here in arrival order, their
// bytes with them, for at most `waitMs`: past it the scan is refused (ScansBusyError), not blamed
// on its file. One caller has at most `perCaller` scans waiting or under way (more:
// TooManyScansError), so one caller's junk cannot take every thread. A job's bytes go to its
// thread transferred when the Buffer owns its whole ArrayBuffer (as an upload gathered by
// http/body-buffer.ts does), and come back with the duration, never having been copied;
// otherwise a copy goes and the Buffer stays as it was. A scan not done within `timeoutMs` of
// its start is not done: its thread is stopped, as one that dies (its heap ran out) is, and both
// take the bytes they held with them: that upload is lost (Probed.bytes undefined), and refused.
import { ProbeThread } from './probe-thread.ts';
import type { ProbeJob, ProbeMessage } from './audio-probe-worker.ts';

/** How long one scan may take once a thread has it: 25 MB of low-bitrate VBR MP3 frames took 1.3 s. */
export const SCAN_TIMEOUT_MS = 10_000;

/** How long a scan may wait for a thread: a full pool of junk is busy for SCAN_TIMEOUT_MS at most. */
export const SCAN_WAIT_MS = 10_000;

/** The threads' module beside this one: audio-probe-worker.ts from the sources, .js from dist/ (npm run build). */
const WORKER_URL = new URL(`./audio-probe-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/** A thread without a scan for this long is stopped; the next scan starts another (in about 100 ms, off the event loop). */
const IDLE_MS = 2_000;

export interface Probed {
  /** The file's bytes: the same Buffer, or its bytes as the thread sent them back; undefined when the thread took them with it (stopped or dead mid-scan). */
  readonly bytes: Buffer | undefined;
  /** The duration its header gives; undefined when it could not be read. */
  readonly seconds: number | undefined;
  /** Why it could not be read, when it is more than music-metadata not recognising the file. */
  readonly unreadable?: string;
}

/** How a scan ended, as tollgate_audio_scans_total counts it. */
export type ScanOutcome = 'read' | 'not_read' | 'timed_out' | 'lost' | 'caller_limit' | 'queue_wait';

/** The caller already has `limit` scans waiting or under way. */
export class TooManyScansError extends Error {
  override name = 'TooManyScansError';
  readonly limit: number;

  constructor(limit: number) {
    super(`the caller already has ${limit} audio scans waiting or under way`);
    this.limit = limit;
  }
}

/** No thread came free for the scan within its wait. */
export class ScansBusyError extends Error {
  override name = 'ScansBusyError';
  readonly waitedMs: number;

  constructor(waitedMs: number) {
    super(`no audio scan thread came free within ${waitedMs} ms`);
    this.waitedMs = waitedMs;
  }
}

interface Job {
  readonly id: number;
  readonly bytes: Buffer;
  /** The file's length (its Buffer reads 0 once its memory went to the thread). */
  readonly size: number;
  /** The memory under `bytes` holds this file alone: it may go to the thread whole. */
  readonly owned: boolean;
  readonly mimeType: string;
  readonly caller: string | undefined;
  /** The thread scanning it, once one has it. */
  thread?: ProbeThread;
  /** The thread has the bytes (they were transferred to it) and has not sent them back yet. */
  lent: boolean;
  /** Its wait's deadline, then its scan's. */
  timer: NodeJS.Timeout;
  readonly resolve: (probed: Probed) => void;
  readonly reject: (error: Error) => void;
}

export interface AudioProbeOptions {
  /** Threads scanning at once (default 1). */
  readonly workers?: number;
  /** Scans one caller may have waiting or under way (default: no bound). */
  readonly perCaller?: number;
  readonly timeoutMs?: number;
  readonly waitMs?: number;
  /** The threads' module (tests give one that misbehaves, or waits to be told). */
  readonly workerUrl?: URL;
  /** Hears how each scan ended (the gateway counts them in its metrics). */
  readonly observe?: (outcome: ScanOutcome) => void;
}

export interface ScanOptions {
  /** The ArrayBuffer under the bytes holds this file alone (from its start; it may be longer): it goes to the thread whole. */
  readonly owned?: boolean;
  /** Who asks: their scans waiting or under way are bounded (`perCaller`). */
  readonly caller?: string;
}

export class AudioProbe {
  readonly #workers: number;
  readonly #perCaller: number;
  readonly #timeoutMs: number;
  readonly #waitMs: number;
  readonly #workerUrl: URL;
  readonly #observe: (outcome: ScanOutcome) => void;
  readonly #threads = new Set<ProbeThread>();
  readonly #queue: Job[] = [];
  readonly #scanning = new Map<ProbeThread, Job>();
  readonly #callers = new Map<string, number>();
  #nextId = 1;
  #idle: (() => void)[] = [];
  /** Told once a thread has loaded (warm). */
  #loaded: (() => void)[] = [];

  constructor(options: AudioProbeOptions = {}) {
    this.#workers = options.workers ?? 1;
    this.#perCaller = options.perCaller ?? Number.POSITIVE_INFINITY;
    this.#timeoutMs = options.timeoutMs ?? SCAN_TIMEOUT_MS;
    this.#waitMs = options.waitMs ?? SCAN_WAIT_MS;
    this.#workerUrl = options.workerUrl ?? WORKER_URL;
    this.#observe = options.observe ?? (() => {});
  }

  /**
   * The duration of the audio in `bytes`, and the bytes (gone when the thread took them with it).
   * Rejects with TooManyScansError or ScansBusyError; a file that cannot be read resolves
   * without seconds. A Buffer that is all of its ArrayBuffer goes to the thread whole, as one
   * `owned` does; any other (a view into memory shared with other Buffers) is copied.
   */
  scan(bytes: Buffer, mimeType: string, options: ScanOptions = {}): Promise<Probed> {
    if (bytes.length === 0) return Promise.resolve({ bytes, seconds: undefined });
    const { caller } = options;
    const held = caller === undefined ? 0 : (this.#callers.get(caller) ?? 0);
    if (held >= this.#perCaller) {
      this.#observe('caller_limit');
      return Promise.reject(new TooManyScansError(this.#perCaller));
    }
    if (caller !== undefined) this.#callers.set(caller, held + 1);
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      const timer = setTimeout(() => this.#waitedTooLong(job), this.#waitMs);
      const job: Job = {
        id,
        bytes,
        size: bytes.length,
        mimeType,
        owned: options.owned ?? false,
        caller,
        lent: false,
        timer,
        resolve,
        reject,
      };
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /**
   * Starts a thread now, if none is, and resolves once one has loaded: the next scan's wait is
   * then not spent loading. (Loading takes about 100 ms, seconds on a loaded machine.)
   */
  warm(): Promise<void> {
    const threads = [...this.#threads];
    if (threads.some((thread) => thread.free)) return Promise.resolve();
    if (!threads.some((thread) => thread.loading)) {
      // Every thread loaded and busy: nothing to load.
      if (threads.length >= this.#workers) return Promise.resolve();
      this.#start();
    }
    return new Promise((resolve) => this.#loaded.push(resolve));
  }

  /** Waits for the scans under way or waiting (each ends by its deadlines), then stops the threads; a later scan starts others. */
  async close(): Promise<void> {
    if (this.#scanning.size > 0 || this.#queue.length > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await Promise.all([...this.#threads].map((thread) => this.#stop(thread)));
  }

  /** Free threads take the oldest scans; scans left over start threads, up to the pool's size. */
  #dispatch(): void {
    for (const thread of this.#threads) {
      const job = thread.free ? this.#queue.shift() : undefined;
      if (job) this.#run(thread, job);
    }
    let loading = 0;
    for (const thread of this.#threads) if (thread.loading) loading++;
    for (let wanted = this.#queue.length - loading; wanted > 0 && this.#threads.size < this.#workers; wanted--) this.#start();
    if (this.#queue.length > 0 || this.#scanning.size > 0) return;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  #run(thread: ProbeThread, job: Job): void {
    clearTimeout(job.timer);
    job.timer = setTimeout(() => this.#timedOut(job), this.#timeoutMs);
    job.thread = thread;
    this.#scanning.set(thread, job);
    const { bytes } = job;
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const owned = !(bytes.buffer instanceof SharedArrayBuffer) && bytes.byteOffset === 0 && (job.owned || whole);
    // A Buffer that is a view of a larger (or shared) one: its bytes copied, the copy given away.
    const sent = owned ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
    job.lent = owned;
    thread.send({ id: job.id, bytes: sent, length: bytes.length, mimeType: job.mimeType, giveBack: owned } satisfies ProbeJob, [sent]);
  }

  #start(): void {
    const thread = new ProbeThread(this.#workerUrl, {
      ready: () => {
        for (const resolve of this.#loaded.splice(0)) resolve();
        this.#dispatch();
        this.#retireIfIdle(thread);
      },
      answered: (_thread, answer) => this.#answered(thread, answer),
      gone: (_thread, why) => this.#gone(thread, why),
    });
    this.#threads.add(thread);
  }

  #answered(thread: ProbeThread, answer: Extract<ProbeMessage, { kind: 'seconds' }>): void {
    const job = this.#scanning.get(thread);
    if (!job) return;
    const returned = answer.bytes && Buffer.from(answer.bytes, 0, job.size);
    if (returned) job.lent = false;
    this.#finish(job, { seconds: answer.seconds }, answer.seconds === undefined ? 'not_read' : 'read', returned);
    this.#dispatch();
    this.#retireIfIdle(thread);
  }

  /** A thread that failed to load, or died: its scan ends unread; one that never loaded fails the waiting scans too (the next would fail alike). */
  #gone(thread: ProbeThread, why: string): void {
    this.#threads.delete(thread);
    const job = this.#scanning.get(thread);
    if (job) this.#finish(job, { seconds: undefined, unreadable: why }, 'lost');
    else if (!thread.loaded) {
      for (const waiting of this.#queue.splice(0)) this.#finish(waiting, { seconds: undefined, unreadable: why }, 'lost');
      for (const resolve of this.#loaded.splice(0)) resolve();
    }
    this.#dispatch();
  }

  #retireIfIdle(thread: ProbeThread): void {
    if (!thread.free || this.#queue.length > 0) return;
    thread.retire = setTimeout(() => void this.#stop(thread), IDLE_MS).unref();
  }

  #stop(thread: ProbeThread): Promise<void> {
    this.#threads.delete(thread);
    return thread.stop();
  }

  /** A scan whose wait for a thread ran out: refused, its file not blamed. */
  #waitedTooLong(job: Job): void {
    const at = this.#queue.indexOf(job);
    if (at < 0) return;
    this.#queue.splice(at, 1);
    this.#release(job);
    this.#observe('queue_wait');
    job.reject(new ScansBusyError(this.#waitMs));
    this.#dispatch();
  }

  /** A scan past its time: its thread is stopped (the bytes it holds go with it), and the next scan starts another. */
  #timedOut(job: Job): void {
    const { thread } = job;
    if (!thread || this.#scanning.get(thread) !== job) return;
    void this.#stop(thread);
    this.#finish(job, { seconds: undefined, unreadable: `reading it took more than ${this.#timeoutMs / 1000} s` }, 'timed_out');
    this.#dispatch();
  }

  #finish(job: Job, result: { seconds: number | undefined; unreadable?: string }, outcome: ScanOutcome, returned?: Buffer): void {
    if (job.thread) this.#scanning.delete(job.thread);
    this.#release(job);
    this.#observe(outcome);
    job.resolve({ bytes: job.lent ? undefined : (returned ?? job.bytes), ...result });
  }

  #release(job: Job): void {
    clearTimeout(job.timer);
    if (job.caller === undefined) return;
    const held = (this.#callers.get(job.caller) ?? 1) - 1;
    if (held > 0) this.#callers.set(job.caller, held);
    else this.#callers.delete(job.caller);
  }
}

// Reads an uploaded audio file's duration in a worker thread (audio-probe-worker.ts), not on the
// event loop: reading every frame of a 25 MB VBR MP3 without a Xing header took 0.4 to 0.9 s, and
// 1 MB of 0xFF bytes sent as an MP3 5 s, during which no other request was answered.
//
// One worker, started with the first upload and kept for the next, does one scan at a time; the
// others wait their turn here, their bytes with them. A job's bytes go to the worker transferred
// when the Buffer owns its whole ArrayBuffer (as an upload gathered by http/body-buffer.ts does),
// and the worker sends them back with the duration, never having copied them; otherwise a copy
// goes and the Buffer stays as it was. A duration not known within SCAN_TIMEOUT_MS of the upload
// (its wait included) is not known: the worker, if it was scanning that file, is stopped, and the
// next upload starts another; a worker that dies (its thread ran out of memory) is replaced the
// same way. Either takes the bytes it held with it: that upload is lost (Probed.bytes undefined),
// and refused. The worker never keeps the process alive (unref); a job waiting does, until its
// deadline at most.
import { Worker } from 'node:worker_threads';
import type { ProbeJob, ProbeMessage } from './audio-probe-worker.ts';

/** How long an upload may wait for its duration, scan included: 25 MB of low-bitrate VBR MP3 frames took 1.3 s. */
export const SCAN_TIMEOUT_MS = 10_000;

/** The worker's module beside this one: audio-probe-worker.ts from the sources, .js from dist/ (npm run build). */
const WORKER_URL = new URL(`./audio-probe-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/** A worker without a scan for this long is stopped; the next upload starts another (in about 100 ms, off the event loop). */
const IDLE_MS = 2_000;

/** What a worker's heap may grow to (the file's bytes are not in it): a scan that needs more ends the worker, not the process. */
const WORKER_HEAP_MB = 128;

export interface Probed {
  /** The file's bytes: the same Buffer, or its bytes as the worker sent them back; undefined when the worker took them with it (stopped or dead mid-scan). */
  readonly bytes: Buffer | undefined;
  /** The duration its header gives; undefined when it could not be read. */
  readonly seconds: number | undefined;
  /** Why it could not be read, when it is more than music-metadata not recognising the file. */
  readonly unreadable?: string;
}

interface Job {
  readonly id: number;
  readonly bytes: Buffer;
  /** The file's length (its Buffer reads 0 once its memory went to the worker). */
  readonly size: number;
  /** The memory under `bytes` holds this file alone: it may go to the worker whole. */
  readonly owned: boolean;
  readonly mimeType: string;
  /** The worker has the bytes (they were transferred to it) and has not sent them back yet. */
  lent: boolean;
  readonly resolve: (probed: Probed) => void;
  readonly timer: NodeJS.Timeout;
  /** The bytes, sent back by the worker. */
  returned?: Buffer;
}

export interface AudioProbeOptions {
  readonly timeoutMs?: number;
  /** The worker's module (tests give one that misbehaves). */
  readonly workerUrl?: URL;
}

export class AudioProbe {
  readonly #timeoutMs: number;
  readonly #workerUrl: URL;
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #ready = false;
  /** The job the worker has. */
  #running: Job | undefined;
  #nextId = 1;
  #idle: (() => void)[] = [];
  /** Told once the worker has loaded (warm). */
  #loaded: (() => void)[] = [];
  /** Stops a worker left without work: its heap (tens of MB after a 25 MB MP3) goes with it. */
  #retire: NodeJS.Timeout | undefined;

  constructor(options: AudioProbeOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? SCAN_TIMEOUT_MS;
    this.#workerUrl = options.workerUrl ?? WORKER_URL;
  }

  /**
   * The duration of the audio in `bytes`, and the bytes (gone when the worker took them with it).
   * `owned`: the ArrayBuffer under `bytes` holds this file alone (from its start; it may be longer),
   * so it goes to the worker whole; a Buffer that is all of its ArrayBuffer goes so too. Any
   * other (a view into memory shared with other Buffers) is copied.
   */
  scan(bytes: Buffer, mimeType: string, owned = false): Promise<Probed> {
    if (bytes.length === 0) return Promise.resolve({ bytes, seconds: undefined });
    return new Promise((resolve) => {
      const id = this.#nextId++;
      const timer = setTimeout(() => this.#expire(job), this.#timeoutMs);
      const job: Job = { id, bytes, size: bytes.length, mimeType, owned, lent: false, resolve, timer };
      this.#queue.push(job);
      this.#next();
    });
  }

  /**
   * Starts the worker now, if none is running, and resolves once it has loaded: the next scan's
   * deadline is then all its own. (Loading takes about 100 ms, seconds on a loaded machine.)
   */
  warm(): Promise<void> {
    if (this.#worker && this.#ready) return Promise.resolve();
    clearTimeout(this.#retire);
    if (!this.#worker) this.#start();
    return new Promise((resolve) => this.#loaded.push(resolve));
  }

  /** Waits for the scans under way or waiting (each ends by its deadline), then stops the worker; a later scan starts another. */
  async close(): Promise<void> {
    if (this.#running || this.#queue.length > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await this.#stop();
  }

  async #stop(): Promise<void> {
    clearTimeout(this.#retire);
    const worker = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    await worker?.terminate();
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#queue.shift();
    if (!job) {
      for (const resolve of this.#idle.splice(0)) resolve();
      if (this.#worker) this.#retire = setTimeout(() => void this.#stop(), IDLE_MS).unref();
      return;
    }
    clearTimeout(this.#retire);
    const worker = this.#worker ?? this.#start();
    // Until the worker has loaded, the bytes stay here: one that fails to load takes none with it.
    if (!this.#ready) {
      this.#queue.unshift(job);
      return;
    }
    this.#running = job;
    const { bytes } = job;
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const owned = !(bytes.buffer instanceof SharedArrayBuffer) && bytes.byteOffset === 0 && (job.owned || whole);
    // A Buffer that is a view of a larger (or shared) one: its bytes copied, the copy given away.
    const sent = owned ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
    job.lent = owned;
    const message: ProbeJob = { id: job.id, bytes: sent, length: bytes.length, mimeType: job.mimeType, giveBack: owned };
    worker.postMessage(message, [sent]);
  }

  #start(): Worker {
    const worker = new Worker(this.#workerUrl, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.#worker = worker;
    this.#ready = false;
    worker.on('message', (message: ProbeMessage) => {
      if (worker !== this.#worker) return;
      if (message.kind === 'ready') {
        this.#ready = true;
        for (const resolve of this.#loaded.splice(0)) resolve();
        this.#next();
        return;
      }
      const job = this.#running;
      if (!job || job.id !== message.id) return;
      if (message.bytes) {
        job.lent = false;
        job.returned = Buffer.from(message.bytes, 0, job.size);
      }
      this.#finish(job, { seconds: message.seconds });
      this.#next();
    });
    // A worker that failed to load, or died (out of memory, its thread ended): its job ends unread, and the next starts another.
    const gone = (why: string) => {
      if (worker !== this.#worker) return;
      this.#worker = undefined;
      this.#ready = false;
      const job = this.#running;
      if (job) this.#finish(job, { seconds: undefined, unreadable: why });
      else for (const waiting of this.#queue.splice(0)) this.#finish(waiting, { seconds: undefined, unreadable: why });
      this.#next();
    };
    worker.on('error', (error) => gone(`its scan failed (${error.message})`));
    worker.on('exit', () => gone('its scan stopped'));
    // After the listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    return worker;
  }

  /** The job's deadline: waiting, it leaves the queue; scanning, the worker is stopped. */
  #expire(job: Job): void {
    const why = `reading it took more than ${this.#timeoutMs / 1000} s`;
    const waiting = this.#queue.indexOf(job);
    if (waiting >= 0) {
      this.#queue.splice(waiting, 1);
      this.#finish(job, { seconds: undefined, unreadable: why });
      this.#next();
      return;
    }
    if (this.#running !== job) return;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    void worker?.terminate();
    this.#finish(job, { seconds: undefined, unreadable: why });
    this.#next();
  }

  #finish(job: Job, result: { seconds: number | undefined; unreadable?: string }): void {
    clearTimeout(job.timer);
    if (this.#running === job) this.#running = undefined;
    job.resolve({ bytes: job.lent ? undefined : (job.returned ?? job.bytes), ...result });
  }
}

/** The gateway's one probe: its worker is started by the first upload. */
export const audioProbe = new AudioProbe();

/** Stops the worker once no scan is left (the app's onClose); the next upload starts another. */
export function closeAudioProbe(): Promise<void> {
  return audioProbe.close();
}

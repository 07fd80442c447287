// One worker thread of the audio scan pool (audio-probe.ts), as the pool sees it: loading, then
// ready for one scan at a time, until it is stopped or dies. The thread's code is
// audio-probe-worker.ts (tests give one that misbehaves or waits to be told).
import { Worker } from 'node:worker_threads';
import type { ProbeJob, ProbeMessage } from './audio-probe-worker.ts';

/** What a worker's heap may grow to (the file's bytes are not in it): a scan that needs more ends the worker, not the process. */
const WORKER_HEAP_MB = 128;

/** What the pool hears of a thread: loaded, a scan's answer, or gone (failed to load, died, ended). */
export interface ThreadEvents {
  ready(thread: ProbeThread): void;
  answered(thread: ProbeThread, answer: Extract<ProbeMessage, { kind: 'seconds' }>): void;
  gone(thread: ProbeThread, why: string): void;
}

export class ProbeThread {
  readonly #worker: Worker;
  #ready = false;
  /** Stopped by the pool, or gone by itself: nothing more is heard of it. */
  #over = false;
  /** The id of the scan it has, if any. */
  scanning: number | undefined;
  /** Stops a thread left without work: its heap (tens of MB after a 25 MB MP3) goes with it. */
  retire: NodeJS.Timeout | undefined;

  constructor(url: URL, events: ThreadEvents) {
    const worker = new Worker(url, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.#worker = worker;
    worker.on('message', (message: ProbeMessage) => {
      if (this.#over) return;
      if (message.kind === 'ready') {
        this.#ready = true;
        events.ready(this);
      } else if (message.id === this.scanning) {
        this.scanning = undefined;
        events.answered(this, message);
      }
    });
    // A worker that failed to load, or died (out of memory, its thread ended).
    const gone = (why: string) => {
      if (this.#over) return;
      this.#over = true;
      clearTimeout(this.retire);
      events.gone(this, why);
    };
    worker.on('error', (error) => gone(`its scan failed (${error.message})`));
    worker.on('exit', () => gone('its scan stopped'));
    // After the listeners: adding a 'message' listener refs the worker again. An idle thread
    // never keeps the process alive; a scan waiting for its answer does, until its deadline.
    worker.unref();
  }

  /** Loaded, not stopped, and not scanning: it may take a scan. */
  get free(): boolean {
    return this.#ready && !this.#over && this.scanning === undefined;
  }

  get loading(): boolean {
    return !this.#ready && !this.#over;
  }

  /** It loaded once (a thread that never did failed to load: the next would fail alike). */
  get loaded(): boolean {
    return this.#ready;
  }

  /** Hands it a scan: the bytes in `transfer` are the thread's until it answers. */
  send(job: ProbeJob, transfer: ArrayBuffer[]): void {
    clearTimeout(this.retire);
    this.scanning = job.id;
    this.#worker.postMessage(job, transfer);
  }

  /** Ends the thread (and a scan it has, with the bytes it holds); nothing more is heard of it. */
  stop(): Promise<void> {
    this.#over = true;
    clearTimeout(this.retire);
    return this.#worker.terminate().then(() => undefined);
  }
}

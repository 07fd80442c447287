// An informer for one resource type: list, then watch from the list's resourceVersion, with a
// cache keyed namespace/name. It relists on 410 Gone and on a periodic resync (emitting an update
// for every object, so an event missed for any reason is healed), restarts a watch that has been
// silent too long, backs off on errors (a 429's Retry-After first), and updates its cache for an
// object only once the handler has accepted the event, retrying a failing handler with backoff.
import { backoffDelay, sleep as realSleep, type BackoffPolicy, type Sleep } from './backoff.ts';
import { KubeApiError, isStatus, objectKey, resourcePath, type KubeClient, type KubeObject, type ResourceType } from './kube-client.ts';
import { silentLog, type Log } from '../log.ts';

export type InformerEvent<T> =
  | { readonly type: 'add'; readonly object: T }
  | { readonly type: 'update'; readonly object: T; readonly previous: T }
  | { readonly type: 'delete'; readonly object: T };

export interface InformerOptions<T> {
  readonly client: KubeClient;
  readonly resource: ResourceType;
  /** One namespace; all namespaces when omitted. */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  /**
   * E.g. `metadata.name=tollgate-routing`: one object by name, which RBAC can then limit to that
   * name with resourceNames (the API server takes the name from this selector for list and watch).
   */
  readonly fieldSelector?: string | undefined;
  /** Called once per event, one at a time, in order; a rejection is retried with backoff. */
  readonly handler: (event: InformerEvent<T>) => Promise<void>;
  /** Relist and emit every object again this often; 0 turns it off. Default 5 minutes. */
  readonly resyncIntervalMs?: number;
  /** Asked of the server, so a healthy watch ends by itself and is renewed. Default 45 s. */
  readonly watchTimeoutSeconds?: number;
  /** A watch that sends nothing for this long is dropped and restarted. Default 60 s. */
  readonly silentWatchTimeoutMs?: number;
  /** Objects per list page. Default 500. */
  readonly pageSize?: number;
  /** For failed requests and for a failing handler. Default 500 ms doubling up to 30 s. */
  readonly backoff?: BackoffPolicy;
  readonly sleep?: Sleep;
  readonly log?: Log;
}

type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: { code?: number; reason?: string; message?: string } };

interface ListPage<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/** Why the informer itself cut a watch short; neither is a failure, so neither backs off. */
class WatchInterrupted extends Error {
  readonly why: 'resync' | 'silent';
  constructor(why: 'resync' | 'silent') {
    super(`watch interrupted: ${why}`);
    this.why = why;
  }
}

export class Informer<T extends KubeObject> {
  /** Resolves once the first list has been handled in full; rejects if stopped before. */
  readonly synced: Promise<void>;

  readonly #options: InformerOptions<T>;
  readonly #path: string;
  readonly #cache = new Map<string, T>();
  readonly #stopping = new AbortController();
  readonly #sleep: Sleep;
  readonly #log: Log;
  readonly #backoff: BackoffPolicy;
  readonly #markSynced: PromiseWithResolvers<void>;
  #resourceVersion = '';
  #needList = true;
  #resyncDue = false;
  #watching = false;
  #failures = 0;
  #cycle: AbortController | undefined;
  #running: Promise<void> | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;

  constructor(options: InformerOptions<T>) {
    const watchTimeoutMs = (options.watchTimeoutSeconds ?? 45) * 1000;
    if (watchTimeoutMs >= (options.silentWatchTimeoutMs ?? 60_000)) {
      throw new Error('silentWatchTimeoutMs must be longer than watchTimeoutSeconds, or every healthy watch would be cut as silent');
    }
    this.#options = options;
    this.#path = resourcePath(options.resource, { namespace: options.namespace });
    this.#sleep = options.sleep ?? realSleep;
    this.#log = options.log ?? silentLog;
    this.#backoff = options.backoff ?? { baseMs: 500, maxMs: 30_000 };
    this.#markSynced = Promise.withResolvers<void>();
    this.synced = this.#markSynced.promise;
    // Nobody may be waiting on `synced` when stop() rejects it; that is not an unhandled error.
    this.synced.catch(() => {});
  }

  start(): void {
    if (this.#running) throw new Error('the informer is already started');
    this.#running = this.#run();
    const every = this.#options.resyncIntervalMs ?? 300_000;
    if (every > 0) this.#resyncTimer = setInterval(() => this.#requestResync(), every).unref();
  }

  /** A snapshot of the cache: every object whose last event the handler accepted. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  async stop(): Promise<void> {
    clearInterval(this.#resyncTimer);
    this.#stopping.abort(new Error('the informer was stopped'));
    await this.#running;
    this.#markSynced.reject(new Error('the informer was stopped before its first list was handled'));
  }

  #requestResync(): void {
    this.#resyncDue = true;
    // A relist in progress already serves as the resync; a watch is cut so the relist starts now.
    if (this.#watching) this.#cycle?.abort(new WatchInterrupted('resync'));
  }

  async #run(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      const cycle = new AbortController();
      this.#cycle = cycle;
      const signal = AbortSignal.any([this.#stopping.signal, cycle.signal]);
      try {
        if (this.#needList || this.#resyncDue) await this.#relist(signal);
        await this.#watch(signal, cycle);
      } catch (caught) {
        if (this.#stopping.signal.aborted) return;
        const waitMs = this.#recover(cycle.signal.aborted ? cycle.signal.reason : caught);
        if (waitMs > 0) await this.#sleep(waitMs, this.#stopping.signal).catch(() => {});
      }
    }
  }

  /** Decides what a failed cycle means; returns how long to wait before the next one. */
  #recover(error: unknown): number {
    if (error instanceof WatchInterrupted) {
      this.#log.debug({ resource: this.#path, why: error.why }, 'informer: restarting the watch');
      return 0;
    }
    if (isStatus(error, 410)) {
      this.#log.info({ resource: this.#path }, 'informer: resourceVersion expired (410 Gone); relisting');
      this.#needList = true;
      return 0;
    }
    this.#failures += 1;
    const retryAfter = error instanceof KubeApiError && error.status === 429 ? error.retryAfterSeconds : undefined;
    const waitMs = retryAfter !== undefined ? retryAfter * 1000 : backoffDelay(this.#failures, this.#backoff);
    this.#log.warn({ resource: this.#path, err: error, retryInMs: waitMs }, 'informer: list or watch failed');
    return waitMs;
  }

  async #relist(signal: AbortSignal): Promise<void> {
    this.#resyncDue = false;
    const { items, resourceVersion } = await this.#listAll(signal);
    this.#failures = 0;
    const listed = new Set<string>();
    for (const object of items) {
      listed.add(objectKey(object));
      for (const event of this.#eventsFor(object)) await this.#deliver(event, signal);
    }
    for (const [key, object] of [...this.#cache]) {
      if (!listed.has(key)) await this.#deliver({ type: 'delete', object }, signal);
    }
    this.#resourceVersion = resourceVersion;
    this.#needList = false;
    this.#markSynced.resolve();
  }

  /** Relisted objects: a name now held by a new object (another uid) is a delete, then an add. */
  #eventsFor(object: T): InformerEvent<T>[] {
    const previous = this.#cache.get(objectKey(object));
    if (!previous) return [{ type: 'add', object }];
    if (previous.metadata?.uid !== object.metadata?.uid)
      return [
        { type: 'delete', object: previous },
        { type: 'add', object },
      ];
    return [{ type: 'update', object, previous }];
  }

  async #listAll(signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let resourceVersion = '';
    let token: string | undefined;
    do {
      const page = await this.#options.client.request<ListPage<T>>({
        path: this.#path,
        query: {
          limit: this.#options.pageSize ?? 500,
          continue: token,
          labelSelector: this.#options.labelSelector,
          fieldSelector: this.#options.fieldSelector,
        },
        signal,
      });
      // Items of a list carry no apiVersion or kind of their own; watch events' objects do.
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items ?? []) items.push({ apiVersion: page.apiVersion, kind, ...item });
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      token = page.metadata?.continue || undefined;
    } while (token);
    return { items, resourceVersion };
  }

  async #watch(signal: AbortSignal, cycle: AbortController): Promise<void> {
    const silence = watchdog(this.#options.silentWatchTimeoutMs ?? 60_000, () => cycle.abort(new WatchInterrupted('silent')));
    const startedAt = Date.now();
    let events = 0;
    this.#watching = true;
    try {
      if (this.#resyncDue) throw new WatchInterrupted('resync');
      silence.restart();
      const lines = await this.#options.client.stream({ path: this.#path, query: this.#watchQuery(), signal });
      for await (const line of lines) {
        // The handler's own time (and its retries) is not the server's silence.
        silence.pause();
        events += 1;
        this.#failures = 0;
        await this.#onWatchEvent(JSON.parse(line) as WatchEvent<T>, signal);
        silence.restart();
      }
    } finally {
      silence.pause();
      this.#watching = false;
    }
    // As client-go's reflector: a watch that closes at once with nothing in it is a failure to
    // back off from, not a reason to reconnect in a tight loop.
    if (events === 0 && Date.now() - startedAt < 1000) throw new Error('very short watch: closed within a second with no events');
    this.#failures = 0;
  }

  #watchQuery() {
    return {
      watch: true,
      resourceVersion: this.#resourceVersion,
      // Bookmarks keep #resourceVersion fresh on a quiet watch, so restarting it rarely meets 410.
      allowWatchBookmarks: true,
      timeoutSeconds: this.#options.watchTimeoutSeconds ?? 45,
      labelSelector: this.#options.labelSelector,
      fieldSelector: this.#options.fieldSelector,
    };
  }

  async #onWatchEvent(event: WatchEvent<T>, signal: AbortSignal): Promise<void> {
    if (event.type === 'ERROR') {
      const status = event.object;
      throw new KubeApiError({ path: this.#path }, status.code ?? 500, JSON.stringify(status), null);
    }
    if (event.type !== 'BOOKMARK') await this.#deliver(this.#watchEvent(event.type, event.object), signal);
    this.#resourceVersion = event.object.metadata?.resourceVersion ?? this.#resourceVersion;
  }

  #watchEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): InformerEvent<T> {
    if (type === 'DELETED') return { type: 'delete', object };
    const previous = this.#cache.get(objectKey(object));
    return previous ? { type: 'update', object, previous } : { type: 'add', object };
  }

  /** Hands one event to the handler until it accepts it; only then does the cache change. */
  async #deliver(event: InformerEvent<T>, signal: AbortSignal): Promise<void> {
    for (let failures = 1; ; failures++) {
      try {
        await this.#options.handler(event);
        break;
      } catch (error) {
        const retryInMs = backoffDelay(failures, this.#backoff);
        this.#log.warn({ key: objectKey(event.object), event: event.type, err: error, retryInMs }, 'informer: handler failed');
        await this.#sleep(retryInMs, signal);
      }
    }
    const key = objectKey(event.object);
    if (event.type === 'delete') this.#cache.delete(key);
    else this.#cache.set(key, event.object);
  }
}

function watchdog(ms: number, onSilent: () => void) {
  let timer: NodeJS.Timeout | undefined;
  return {
    restart() {
      clearTimeout(timer);
      timer = setTimeout(onSilent, ms).unref();
    },
    pause() {
      clearTimeout(timer);
    },
  };
}

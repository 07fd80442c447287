// Holds the routing table being served and swaps it whole when a new snapshot arrives.
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import { ProviderStates } from './provider-state.ts';
import { RoutingTable } from './routing-table.ts';

/** Served until a first snapshot arrives: no routers, so every model is not found. */
const NOTHING: Snapshot = { format: SNAPSHOT_FORMAT, version: '', routers: [], providers: [] };

export class ServedRouting {
  readonly providerStates = new ProviderStates();
  #table: RoutingTable;
  #waiting: string | undefined;
  readonly #onLoad: (table: RoutingTable) => void;
  readonly #listeners: ((table: RoutingTable) => void)[] = [];

  /**
   * Without a snapshot the state starts empty and not ready (see `waiting`) until the first
   * load(): Kubernetes mode starts serving before its routing ConfigMap has been read.
   */
  constructor(snapshot: Snapshot | undefined, onLoad: (table: RoutingTable) => void = () => {}) {
    this.#onLoad = onLoad;
    this.#table = RoutingTable.build(snapshot ?? NOTHING, this.providerStates);
    if (snapshot) onLoad(this.#table);
    else this.#waiting = 'no routing snapshot loaded yet';
  }

  /** The table new requests use; a request keeps the one it started with. */
  get table(): RoutingTable {
    return this.#table;
  }

  /** Why no snapshot is served yet; undefined once one has been loaded. */
  get waiting(): string | undefined {
    return this.#waiting;
  }

  /** Says what the state is waiting for; ignored once a snapshot is served. */
  waitFor(reason: string): void {
    if (this.#waiting !== undefined) this.#waiting = reason;
  }

  load(snapshot: Snapshot): RoutingTable {
    this.#table = RoutingTable.build(snapshot, this.providerStates);
    this.#waiting = undefined;
    this.#onLoad(this.#table);
    for (const listener of this.#listeners) listener(this.#table);
    return this.#table;
  }

  /** Calls `listener` with the table served now, then with each one loaded after. */
  onLoad(listener: (table: RoutingTable) => void): void {
    this.#listeners.push(listener);
    listener(this.#table);
  }
}

// Holds the routing table being served and swaps it whole when a new snapshot arrives.
import type { Snapshot } from '../resources/snapshot.ts';
import { ProviderStates } from './provider-state.ts';
import { RoutingTable } from './routing-table.ts';

export class RoutingState {
  readonly providerStates = new ProviderStates();
  #table: RoutingTable;
  readonly #onLoad: (table: RoutingTable) => void;

  constructor(snapshot: Snapshot, onLoad: (table: RoutingTable) => void = () => {}) {
    this.#onLoad = onLoad;
    this.#table = RoutingTable.build(snapshot, this.providerStates);
    onLoad(this.#table);
  }

  /** The table new requests use; a request keeps the one it started with. */
  get table(): RoutingTable {
    return this.#table;
  }

  load(snapshot: Snapshot): RoutingTable {
    this.#table = RoutingTable.build(snapshot, this.providerStates);
    this.#onLoad(this.#table);
    return this.#table;
  }
}

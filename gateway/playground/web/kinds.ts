// The API's closed vocabularies, from core/resources/kinds.ts itself (bundled: it imports
// nothing), so the forms offer exactly what the gateway accepts; the server still validates.
import * as kinds from '../../../core/resources/kinds.ts';

export { BUDGET_PERIODS, PROVIDER_TYPES, ROUTER_TYPES, ROUTING_MODES, STRATEGIES } from '../../../core/resources/kinds.ts';

/** Provider types that must be given a URL (the form's value is any string). */
export const URL_REQUIRED: readonly string[] = kinds.URL_REQUIRED;
/** The well-known address of each provider type that has one. */
export const DEFAULT_URLS: Readonly<Record<string, string>> = kinds.DEFAULT_URLS;

/** Electricity mixes the gateway knows. */
export const ZONES = Object.keys(kinds.GRID_FACTORS);

export const options = (values: readonly string[]): [string, string][] => values.map((v) => [v, v]);

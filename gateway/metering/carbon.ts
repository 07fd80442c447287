// Energy and emissions of one generation request, after EcoLogits 0.9.1
// (ecologits/impacts/llm.py, docs/methodology/llm_inference.md). See docs/carbon.md.
import type { CarbonInputs } from '../../core/resources/carbon.ts';
import { GRID_FACTORS, type Zone } from '../../core/resources/kinds.ts';

export interface CarbonEstimate {
  kWh: number;
  kgCO2eq: number;
}

export const NO_CARBON: CarbonEstimate = Object.freeze({ kWh: 0, kgCO2eq: 0 });

const BATCH = 64;
const QUANT_BITS = 16;
const GPU_MEMORY_GB = 80;
const SERVER_KW_PER_8_GPUS = 1.2;
const LIFETIME_S = 94_608_000;
const SERVER_EMBODIED_KG = 5700;
const GPU_EMBODIED_KG = 164;
const ENERGY = { alpha: 1.1665273170451914e-6, beta: -0.011205921025579175, gamma: 4.052928146734005e-5 };
const LATENCY = { perParam: 6.785088094353663e-4, perBatch: 3.119310311688259e-4, constant: 1.9473717579473387e-2 };

/** The per-provider part of the computation, done once when the routing table is built. */
export interface CarbonModel {
  readonly energyPerTokenWh: number;
  readonly secondsPerToken: number;
  readonly gpus: number;
  readonly pue: number;
  readonly gridFactor: number;
  readonly embodiedKgPerSecond: number;
}

/** Returns undefined when the parameter count is unknown: the method then reports 0, not a guess. */
export function carbonModel(inputs: CarbonInputs | undefined): CarbonModel | undefined {
  const active = inputs?.params_active_b ?? inputs?.params_total_b;
  const total = inputs?.params_total_b ?? inputs?.params_active_b;
  if (!inputs || active === undefined || total === undefined) return undefined;
  const memoryGb = (1.2 * total * QUANT_BITS) / 8;
  const gpus = 2 ** Math.ceil(Math.log2(Math.ceil(memoryGb / GPU_MEMORY_GB)));
  return {
    energyPerTokenWh: ENERGY.alpha * Math.exp(ENERGY.beta * BATCH) * active + ENERGY.gamma,
    secondsPerToken: LATENCY.perParam * active + LATENCY.perBatch * BATCH + LATENCY.constant,
    gpus,
    pue: inputs.pue,
    gridFactor: inputs.gwp_kg_per_kwh ?? GRID_FACTORS[inputs.zone as Zone],
    embodiedKgPerSecond: ((gpus / 8) * SERVER_EMBODIED_KG + gpus * GPU_EMBODIED_KG) / (BATCH * LIFETIME_S),
  };
}

/**
 * Estimate for one request that produced `outputTokens`, which took `latencySeconds` upstream
 * (Infinity when unknown: the modelled generation time is then used uncapped).
 */
export function estimateCarbon(model: CarbonModel | undefined, outputTokens: number, latencySeconds: number): CarbonEstimate {
  if (!model || outputTokens <= 0) return NO_CARBON;
  const gpuKWh = (outputTokens * model.energyPerTokenWh) / 1000;
  const seconds = Math.min(outputTokens * model.secondsPerToken, latencySeconds);
  const serverKWh = ((seconds / 3600) * SERVER_KW_PER_8_GPUS * (model.gpus / 8)) / BATCH;
  const kWh = model.pue * (serverKWh + model.gpus * gpuKWh);
  return { kWh, kgCO2eq: kWh * model.gridFactor + seconds * model.embodiedKgPerSecond };
}

/** Generation time the method models for `outputTokens` (exposed for tests and docs). */
export function modelledSeconds(model: CarbonModel, outputTokens: number): number {
  return outputTokens * model.secondsPerToken;
}

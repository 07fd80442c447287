// The carbon estimate against the EcoLogits 0.9.1 method as ../shared/reference/carbon-method.md
// states it: its test vectors (PUE 1.2, no latency cap, 100 output tokens), then each rule of the
// method on its own: latency cap, unknown size, custom emission factor, mixture of experts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CarbonInputs } from '../../../core/resources/carbon.ts';
import { GRID_FACTORS } from '../../../core/resources/kinds.ts';
import { NO_CARBON, carbonModel, estimateCarbon, modelledSeconds, type CarbonModel } from '../../../gateway/metering/carbon.ts';

/** The vectors are rounded to 4-5 significant digits: agree to a relative 5e-4. */
const RELATIVE_TOLERANCE = 5e-4;

function assertClose(actual: number, expected: number, what: string): void {
  const error = Math.abs(actual - expected) / Math.abs(expected);
  assert.ok(error <= RELATIVE_TOLERANCE, `${what}: got ${actual}, expected ${expected} (relative error ${error.toExponential(2)})`);
}

function model(inputs: Record<string, unknown>): CarbonModel {
  const built = carbonModel(CarbonInputs.parse(inputs));
  assert.ok(built, 'a model with a parameter count has a carbon model');
  return built;
}

/** Embodied share alone: with an emission factor of 0 the usage share vanishes. */
function embodied(inputs: Record<string, unknown>, outputTokens: number, latency = Infinity): number {
  return estimateCarbon(model({ ...inputs, gwp_kg_per_kwh: 0 }), outputTokens, latency).kgCO2eq;
}

const OUTPUT_TOKENS = 100;

describe('test vectors of the method (PUE 1.2, no latency cap, 100 output tokens)', () => {
  const vectors = [
    { name: '8B dense', params: 8, gpus: 1, seconds: 4.4865, kWh: 8.9153e-6, usage: { WOR: 4.217e-6, FRA: 3.939e-7 }, embodied: 6.495e-7 },
    { name: '70B dense', params: 70, gpus: 4, seconds: 8.6933, kWh: 6.5753e-5, usage: { WOR: 3.11e-5 }, embodied: undefined },
  ];
  for (const v of vectors) {
    describe(v.name, () => {
      const inputs = { params_total_b: v.params };

      test(`needs ${v.gpus} GPU(s)`, () => {
        assert.equal(model(inputs).gpus, v.gpus);
      });

      test(`generates ${OUTPUT_TOKENS} tokens in ${v.seconds} s`, () => {
        assertClose(modelledSeconds(model(inputs), OUTPUT_TOKENS), v.seconds, 'dT');
      });

      test(`uses ${v.kWh} kWh (usage.carbon.kWh)`, () => {
        assertClose(estimateCarbon(model(inputs), OUTPUT_TOKENS, Infinity).kWh, v.kWh, 'E_req');
      });

      for (const [zone, expected] of Object.entries(v.usage)) {
        test(`emits ${expected} kgCO2eq by its use of electricity in ${zone}`, () => {
          const estimate = estimateCarbon(model({ ...inputs, zone }), OUTPUT_TOKENS, Infinity);
          const usage = estimate.kgCO2eq - embodied(inputs, OUTPUT_TOKENS);
          assertClose(usage, expected, `GWP_usage ${zone}`);
          assertClose(usage, estimate.kWh * GRID_FACTORS[zone as keyof typeof GRID_FACTORS], `E_req x F_gwp(${zone})`);
        });
      }

      if (v.embodied !== undefined) {
        const embodiedKg = v.embodied;
        test(`carries ${embodiedKg} kgCO2eq of embodied emissions`, () => {
          assertClose(embodied(inputs, OUTPUT_TOKENS), embodiedKg, 'GWP_emb');
        });

        test('reports kgCO2eq as the usage share plus the embodied share', () => {
          assertClose(estimateCarbon(model(inputs), OUTPUT_TOKENS, Infinity).kgCO2eq, v.usage.WOR + embodiedKg, 'kgCO2eq WOR');
          assertClose(
            estimateCarbon(model({ ...inputs, zone: 'FRA' }), OUTPUT_TOKENS, Infinity).kgCO2eq,
            v.usage.FRA! + embodiedKg,
            'kgCO2eq FRA',
          );
        });
      }
    });
  }
});

describe('GPU count: memory 1.2 x P_tot x 16 bits over 80 GB, rounded up to a power of two', () => {
  const cases = [
    { params: 1, memoryGb: 2.4, gpus: 1 },
    { params: 8, memoryGb: 19.2, gpus: 1 },
    { params: 34, memoryGb: 81.6, gpus: 2 },
    { params: 70, memoryGb: 168, gpus: 4 },
    { params: 405, memoryGb: 972, gpus: 16 },
  ];
  for (const { params, memoryGb, gpus } of cases) {
    test(`${params}B parameters need ${memoryGb} GB: ${gpus} GPU(s)`, () => {
      assert.equal(model({ params_total_b: params }).gpus, gpus);
    });
  }
});

describe('latency cap: dT = min(T_out x f_L, measured latency)', () => {
  const inputs = { params_total_b: 8 };
  const modelled = 4.4865; // s, from the 8B vector

  test('a measured latency longer than the modelled time changes nothing', () => {
    assert.deepEqual(estimateCarbon(model(inputs), OUTPUT_TOKENS, 60), estimateCarbon(model(inputs), OUTPUT_TOKENS, Infinity));
  });

  test('a measured latency shorter than the modelled time shortens the server and embodied shares only', () => {
    const measured = 1;
    const uncapped = estimateCarbon(model(inputs), OUTPUT_TOKENS, Infinity);
    const capped = estimateCarbon(model(inputs), OUTPUT_TOKENS, measured);
    // E_srv = dT / 3600 x 1.2 kW x (n_GPU / 8) / B, times PUE 1.2: the GPU energy does not depend on dT.
    const serverKWhPerSecond = (1.2 * 1.2 * (1 / 8)) / 64 / 3600;
    assertClose(uncapped.kWh - capped.kWh, serverKWhPerSecond * (modelled - measured), 'kWh saved by the shorter time');
    // The embodied share is proportional to dT.
    assertClose(embodied(inputs, OUTPUT_TOKENS, measured), (6.495e-7 * measured) / modelled, 'GWP_emb over 1 s');
  });
});

describe('when the method reports nothing', () => {
  const cases: { name: string; model: CarbonModel | undefined; outputTokens: number }[] = [
    { name: 'no carbon inputs at all', model: carbonModel(undefined), outputTokens: 100 },
    {
      name: 'inputs without a parameter count (no guess)',
      model: carbonModel(CarbonInputs.parse({ zone: 'FRA', pue: 1.1 })),
      outputTokens: 100,
    },
    { name: 'zero output tokens', model: model({ params_total_b: 8 }), outputTokens: 0 },
    { name: 'a negative token count', model: model({ params_total_b: 8 }), outputTokens: -5 },
  ];
  for (const c of cases) {
    test(`${c.name}: 0 kWh and 0 kgCO2eq`, () => {
      assert.deepEqual(estimateCarbon(c.model, c.outputTokens, Infinity), { kWh: 0, kgCO2eq: 0 });
    });
  }

  test('an unknown parameter count has no carbon model', () => {
    assert.equal(carbonModel(CarbonInputs.parse({ zone: 'FRA' })), undefined);
    assert.deepEqual(NO_CARBON, { kWh: 0, kgCO2eq: 0 });
  });
});

describe('emission factor', () => {
  const energy = estimateCarbon(model({ params_total_b: 8 }), OUTPUT_TOKENS, Infinity).kWh;
  const embodiedKg = embodied({ params_total_b: 8 }, OUTPUT_TOKENS);

  test('the zone defaults to WOR, the world average', () => {
    assert.equal(CarbonInputs.parse({ params_total_b: 8 }).zone, 'WOR');
    assert.equal(model({ params_total_b: 8 }).gridFactor, 0.47301);
  });

  for (const [zone, factor] of Object.entries({ WOR: 0.47301, FRA: 0.04418, USA: 0.38355, SWE: 0.03582, DEU: 0.34414 })) {
    test(`${zone} emits ${factor} kgCO2eq per kWh`, () => {
      assert.equal(GRID_FACTORS[zone as keyof typeof GRID_FACTORS], factor);
      assertClose(estimateCarbon(model({ params_total_b: 8, zone }), OUTPUT_TOKENS, Infinity).kgCO2eq, energy * factor + embodiedKg, zone);
    });
  }

  test('a custom gwp_kg_per_kwh overrides the zone', () => {
    const estimate = estimateCarbon(model({ params_total_b: 8, zone: 'FRA', gwp_kg_per_kwh: 0.7 }), OUTPUT_TOKENS, Infinity);
    assertClose(estimate.kgCO2eq, energy * 0.7 + embodiedKg, 'kgCO2eq with 0.7 kg/kWh');
  });

  test('a zone outside the table is accepted with its own factor', () => {
    const estimate = estimateCarbon(model({ params_total_b: 8, zone: 'ITA', gwp_kg_per_kwh: 0.3 }), OUTPUT_TOKENS, Infinity);
    assertClose(estimate.kgCO2eq, energy * 0.3 + embodiedKg, 'kgCO2eq in ITA at 0.3 kg/kWh');
  });

  test('a zone outside the table without a factor is refused, naming the known zones', () => {
    const parsed = CarbonInputs.safeParse({ params_total_b: 8, zone: 'ITA' });
    assert.deepEqual(
      parsed.error?.issues.map((i) => [i.path, i.message]),
      [[['zone'], 'has no built-in emission factor (known: WOR, FRA, USA, SWE, DEU); set gwp_kg_per_kwh']],
    );
  });

  test('a zone that is not an ISO alpha-3 code is refused', () => {
    const parsed = CarbonInputs.safeParse({ params_total_b: 8, zone: 'fr', gwp_kg_per_kwh: 0.1 });
    assert.deepEqual(
      parsed.error?.issues.map((i) => [i.path, i.message]),
      [[['zone'], 'must be an ISO 3166-1 alpha-3 code such as FRA']],
    );
  });

  test('the PUE multiplies the energy', () => {
    const atPue = (pue: number) => estimateCarbon(model({ params_total_b: 8, pue }), OUTPUT_TOKENS, Infinity).kWh;
    assertClose(atPue(1.5) / atPue(1.2), 1.5 / 1.2, 'energy ratio of PUE 1.5 to 1.2');
  });
});

describe('mixture of experts: active parameters for energy and time, total parameters for GPUs', () => {
  // Mixtral 8x7B: 46.7B parameters in total, 12.9B active per token.
  const moe = model({ params_total_b: 46.7, params_active_b: 12.9 });
  const denseActive = model({ params_total_b: 12.9 });
  const denseTotal = model({ params_total_b: 46.7 });

  test('energy and time per token follow the active parameters', () => {
    assert.equal(moe.energyPerTokenWh, denseActive.energyPerTokenWh);
    assert.equal(moe.secondsPerToken, denseActive.secondsPerToken);
    assert.notEqual(moe.energyPerTokenWh, denseTotal.energyPerTokenWh);
  });

  test('the GPU count follows the total parameters: 112 GB need 2 GPUs, where 12.9B alone fit on 1', () => {
    assert.equal(moe.gpus, 2);
    assert.equal(denseTotal.gpus, 2);
    assert.equal(denseActive.gpus, 1);
  });

  test('the request energy follows the formula with both', () => {
    // Steps 1-5 of the method with P_act = 12.9, P_tot = 46.7, B = 64, T_out = 100, PUE 1.2.
    const energyPerTokenWh = 1.1665273170451914e-6 * Math.exp(-0.011205921025579175 * 64) * 12.9 + 4.052928146734005e-5;
    const seconds = 100 * (6.785088094353663e-4 * 12.9 + 3.119310311688259e-4 * 64 + 1.9473717579473387e-2);
    const serverKWh = ((seconds / 3600) * 1.2 * (2 / 8)) / 64;
    const expected = 1.2 * (serverKWh + 2 * ((100 * energyPerTokenWh) / 1000));
    assertClose(estimateCarbon(moe, OUTPUT_TOKENS, Infinity).kWh, expected, 'E_req of the MoE model');
  });

  test('a model with only its active count uses it for both', () => {
    assert.deepEqual(model({ params_active_b: 8 }), model({ params_total_b: 8 }));
  });
});

// A provider's carbon inputs, as a resource declares them: the schema the config loader, the admin
// API, the CRDs and the operator share. What is computed from them is the gateway's (gateway/metering/carbon.ts).
import { z } from 'zod';
import { GRID_FACTORS } from './kinds.ts';

/** Per-provider inputs: properties of the backend that serves the model. */
export const CarbonInputs = z
  .strictObject({
    params_total_b: z.number().positive().max(100_000).optional().describe('Total parameters of the served model, in billions.'),
    params_active_b: z
      .number()
      .positive()
      .max(100_000)
      .optional()
      .describe('Active parameters per token (mixture of experts), in billions; equal to the total for dense models.'),
    zone: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 3166-1 alpha-3 code such as FRA')
      .default('WOR')
      .describe('ISO 3166-1 alpha-3 code of the electricity mix where the backend runs.'),
    pue: z.number().min(1).max(3).default(1.2).describe('Power usage effectiveness of the data centre.'),
    gwp_kg_per_kwh: z
      .number()
      .nonnegative()
      .max(2)
      .optional()
      .describe('Emission factor of the electricity in kgCO2eq/kWh; overrides the zone table.'),
  })
  .superRefine((value, ctx) => checkZoneFactor(value, ctx));
export type CarbonInputs = z.output<typeof CarbonInputs>;

/**
 * The rule across the inputs: a zone without a built-in emission factor needs one given. `name`
 * words a field as the reader writes it: as here, or a ModelProvider's camelCase (kubernetes/provider-fields.ts).
 */
export function checkZoneFactor(
  value: { zone: string; gwp_kg_per_kwh?: number | undefined },
  ctx: z.RefinementCtx,
  name: (field: string) => string = (field) => field,
): void {
  if (value.gwp_kg_per_kwh === undefined && !(value.zone in GRID_FACTORS)) {
    ctx.addIssue({
      code: 'custom',
      path: [name('zone')],
      message: `has no built-in emission factor (known: ${Object.keys(GRID_FACTORS).join(', ')}); set ${name('gwp_kg_per_kwh')}`,
    });
  }
}

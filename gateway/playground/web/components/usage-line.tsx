// What an answer used, under it: what it was measured in (tokens for a chat answer, seconds of
// audio for a transcript), then its cost, energy and emissions.
import type { ComponentChildren } from 'preact';
import type { Usage } from '../api.ts';
import { co2, kwh, money } from '../format.ts';

export function UsageLine({ usage, label, measure, amount }: { usage: Usage; label: string; measure: string; amount: ComponentChildren }) {
  return (
    <dl class="usage" aria-label={label}>
      <div>
        <dt>{measure}</dt>
        <dd>{amount}</dd>
      </div>
      <div>
        <dt>Cost</dt>
        <dd class="cost">{money(usage.cost)}</dd>
      </div>
      <div>
        <dt>Energy</dt>
        <dd>{kwh(usage.carbon.kWh)}</dd>
      </div>
      <div>
        <dt>Emissions</dt>
        <dd>{co2(usage.carbon.kgCO2eq)}</dd>
      </div>
    </dl>
  );
}

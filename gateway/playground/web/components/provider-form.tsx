// The fields of the provider form (Providers page): router, kind, id, backend and its limits,
// the write-only key, health checks, the chosen router's prices, the carbon inputs and, for the
// simulator, how it answers. Fields a kind does not have are not shown (provider-values.ts
// sends them as null).
import type { Provider, Router } from '../api.ts';
import { CheckboxField, SelectField, TextField, type Form } from '../forms.tsx';
import { DEFAULT_URLS, options, PROVIDER_TYPES, URL_REQUIRED, ZONES } from '../kinds.ts';
import type { ProviderField } from './provider-values.ts';

export function ProviderFields(props: {
  form: Form<ProviderField>;
  editing: Provider | null;
  routers: readonly Router[];
  /** Picking a router shows its prices in the cost fields. */
  onRouter: (name: string) => void;
}) {
  const { form, editing } = props;
  const v = form.values;
  const simulator = v.type === 'simulator';
  return (
    <>
      <div class="row">
        <RouterSelect form={form} routers={props.routers} onRouter={props.onRouter} />
        <SelectField form={form} name="type" label="Type" required options={options(PROVIDER_TYPES)} />
        <TextField
          form={form}
          name="id"
          label="Id (optional)"
          disabled={editing !== null}
          hint={editing ? 'An id cannot be changed.' : 'Generated from the router name when empty.'}
        />
      </div>
      <div class="row">
        <TextField form={form} name="model" label="Model name" required hint="The model name sent to the backend." />
        {!simulator && (
          <TextField
            form={form}
            name="url"
            label={URL_REQUIRED.includes(v.type) ? 'URL' : 'URL (optional)'}
            required={URL_REQUIRED.includes(v.type)}
            placeholder={DEFAULT_URLS[v.type] ?? 'http://vllm:8000'}
            hint="Base address, without /v1."
          />
        )}
        <TextField
          form={form}
          name="timeout"
          label="Timeout (seconds)"
          inputMode="decimal"
          hint="Optional: for the first byte, and between two streamed chunks; empty: the gateway's settings."
        />
        <TextField
          form={form}
          name="retries"
          label="Retries (optional)"
          inputMode="numeric"
          hint="After a 429, 502, 503, 504 or a refused connection, with backoff; empty: the gateway's --retries."
        />
        <TextField
          form={form}
          name="maxConcurrent"
          label="Max concurrent (optional)"
          inputMode="numeric"
          hint="Most requests at once (across the fleet in queue mode); 0 closes it; empty is unlimited."
        />
      </div>
      <div class="row">
        <TextField
          form={form}
          name="key"
          label="API key of the backend"
          type="password"
          autocomplete="new-password"
          hint={
            editing
              ? `Write-only. Currently ${editing.has_key ? 'set' : 'not set'}; leave empty to keep it.`
              : 'Write-only: never shown again. Optional.'
          }
        />
        {editing?.has_key && <CheckboxField form={form} name="clearKey" label="Remove the key" />}
      </div>
      {!simulator && (
        <div class="row">
          <CheckboxField form={form} name="healthCheck" label="Health checks: probe the backend's health route" />
          {v.healthCheck === 'true' && (
            <TextField form={form} name="healthInterval" label="Probe every (seconds)" inputMode="decimal" required />
          )}
        </div>
      )}
      <fieldset>
        <legend>Prices of router {v.router || '…'} (per 1M tokens)</legend>
        <p class="hint">Prices belong to the router: changing them here changes them for all its providers.</p>
        <div class="row">
          <TextField form={form} name="prompt" label="Prompt token cost" inputMode="decimal" required />
          <TextField form={form} name="completion" label="Completion token cost" inputMode="decimal" required />
        </div>
      </fieldset>
      <CarbonFields form={form} />
      {simulator && <SimulatorFields form={form} />}
    </>
  );
}

/** The router served: a select of its own, as choosing one also fills in its prices. */
function RouterSelect(props: { form: Form<ProviderField>; routers: readonly Router[]; onRouter: (name: string) => void }) {
  const { form } = props;
  const problem = form.problems.router;
  return (
    <div class="field">
      <label for="provider-router">
        Router<span aria-hidden="true"> *</span>
      </label>
      <select
        id="provider-router"
        value={form.values.router}
        aria-required="true"
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={problem ? 'provider-router-problem' : undefined}
        onChange={(e) => props.onRouter(e.currentTarget.value)}
      >
        {props.routers.map((r) => (
          <option key={r.name} value={r.name}>
            {r.name}
          </option>
        ))}
      </select>
      {problem && (
        <p class="problem" id="provider-router-problem">
          {problem}
        </p>
      )}
    </div>
  );
}

function CarbonFields({ form }: { form: Form<ProviderField> }) {
  return (
    <fieldset>
      <legend>Carbon inputs (optional)</legend>
      <div class="row">
        <TextField form={form} name="paramsTotal" label="Total parameters (billions)" inputMode="decimal" />
        <TextField
          form={form}
          name="paramsActive"
          label="Active parameters (billions)"
          inputMode="decimal"
          hint="Mixture of experts; empty for dense models."
        />
        <SelectField form={form} name="zone" label="Electricity zone" options={[['', 'default (WOR)'], ...options(ZONES)]} />
        <TextField form={form} name="pue" label="PUE" inputMode="decimal" hint="Data centre overhead, 1 to 3 (default 1.2)." />
      </div>
    </fieldset>
  );
}

function SimulatorFields({ form }: { form: Form<ProviderField> }) {
  return (
    <fieldset>
      <legend>Simulator</legend>
      <div class="row">
        <TextField form={form} name="latency" label="Latency (ms)" inputMode="numeric" />
        <TextField form={form} name="tokensPerSecond" label="Tokens per second" inputMode="decimal" hint="0 streams as fast as possible." />
        <TextField
          form={form}
          name="completionTokens"
          label="Completion tokens"
          inputMode="numeric"
          hint="When a request sets no max_tokens."
        />
      </div>
    </fieldset>
  );
}

// Routers (admin): the model names users call, their aliases, strategy, routing mode (and, in
// queue mode, how many requests wait), fallbacks and prices per million tokens (and per minute of
// audio, for transcription routers), with the optional prices of prompt tokens read from and
// written to a backend's prompt cache (left empty, they cost the prompt price). Create and edit
// share one form; deleting a router also deletes its providers.
import { useEffect, useRef, useState } from 'preact/hooks';
import { segment, type Router, type RouterList, type RoutingLive } from '../api.ts';
import { useSession } from '../context.ts';
import { CreateOrEditForm, SelectField, TextField, useForm, numberOrNull, type Values } from '../forms.tsx';
import { price } from '../format.ts';
import { options, ROUTER_TYPES, ROUTING_MODES, STRATEGIES } from '../kinds.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { check, decimal, integer, modelName, required } from '../rules.ts';
import { EditDeleteCell, ListTable, num } from '../components/list-table.tsx';
import { LoadError } from '../components/notice.tsx';

type RouterField =
  | 'name'
  | 'type'
  | 'aliases'
  | 'strategy'
  | 'mode'
  | 'fallbacks'
  | 'contextFallback'
  | 'prompt'
  | 'completion'
  | 'cached'
  | 'cacheWrite'
  | 'audio'
  | 'maxCompletion'
  | 'maxContext';

const EMPTY: Values<RouterField> = {
  name: '',
  type: 'text-generation',
  aliases: '',
  strategy: 'shuffle',
  mode: '',
  fallbacks: '',
  contextFallback: '',
  prompt: '0',
  completion: '0',
  cached: '',
  cacheWrite: '',
  audio: '0',
  maxCompletion: '',
  maxContext: '8192',
};

/** The server's field paths, for showing its 400/409 next to the right field. */
const PARAMS: Record<string, RouterField> = {
  name: 'name',
  type: 'type',
  aliases: 'aliases',
  load_balancing_strategy: 'strategy',
  routing_mode: 'mode',
  fallbacks: 'fallbacks',
  context_fallback: 'contextFallback',
  'costs.prompt_tokens': 'prompt',
  'costs.completion_tokens': 'completion',
  'costs.cached_prompt_tokens': 'cached',
  'costs.cache_write_prompt_tokens': 'cacheWrite',
  'costs.audio_minutes': 'audio',
  max_completion_tokens: 'maxCompletion',
  max_context_length: 'maxContext',
};

export function RoutersPage() {
  const session = useSession();
  const [routers, setRouters] = useState<Router[] | null>(null);
  const [live, setLive] = useState<RoutingLive | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const form = useForm<RouterField>('router', EMPTY);
  const formHeading = useRef<HTMLHeadingElement>(null);

  const read = () => session.call<RouterList>('GET', '/v1/admin/routers').then((list) => list.data);
  const load = () => read().then(setRouters, (e) => setError(readable(e)));
  // Modes and queues change without an edit: read with the list, and again every few seconds.
  const readLive = () => session.call<RoutingLive>('GET', '/v1/admin/routing').then(setLive, () => setLive(null));
  useEffect(() => {
    load();
    readLive();
    const timer = setInterval(readLive, 5000);
    return () => clearInterval(timer);
  }, []);
  const liveOf = (name: string) => live?.routers.find((r) => r.name === name);
  /** Says `done` and shows the list once it has the write (in Kubernetes mode, a moment later). */
  const reload = (done: string) => readAfterWrite(session, done, routers, read).then(setRouters, (e) => setError(readable(e)));

  const edit = (router: Router) => {
    setEditing(router.name);
    form.reset({
      name: router.name,
      type: router.type,
      aliases: router.aliases.join(', '),
      strategy: router.load_balancing_strategy,
      mode: router.routing_mode ?? '',
      fallbacks: router.fallbacks.join(', '),
      contextFallback: router.context_fallback === null ? '' : String(router.context_fallback),
      prompt: price(router.costs.prompt_tokens),
      completion: price(router.costs.completion_tokens),
      cached: optionalPrice(router.costs.cached_prompt_tokens),
      cacheWrite: optionalPrice(router.costs.cache_write_prompt_tokens),
      audio: price(router.costs.audio_minutes),
      maxCompletion: router.max_completion_tokens === null ? '' : String(router.max_completion_tokens),
      maxContext: String(router.max_context_length),
    });
    formHeading.current?.focus();
  };
  const stopEditing = () => {
    setEditing(null);
    form.reset(EMPTY);
  };

  const save = () =>
    form.submit(
      validate,
      async (v) => {
        const body = {
          type: v.type,
          aliases: splitList(v.aliases),
          load_balancing_strategy: v.strategy,
          // '' leaves the mode to the gateway's setting (null removes one set before).
          routing_mode: v.mode === '' ? null : v.mode,
          fallbacks: splitList(v.fallbacks),
          // '' leaves it to the default: on when fallbacks are set.
          context_fallback: v.contextFallback === '' ? null : v.contextFallback === 'true',
          costs: {
            prompt_tokens: v.prompt.trim(),
            completion_tokens: v.completion.trim(),
            audio_minutes: v.audio.trim(),
            // Empty: no price of its own (null removes one set before), so these tokens cost the prompt price.
            cached_prompt_tokens: v.cached.trim() || null,
            cache_write_prompt_tokens: v.cacheWrite.trim() || null,
          },
          max_completion_tokens: numberOrNull(v.maxCompletion),
          max_context_length: Number(v.maxContext),
        };
        let done: string;
        if (editing) {
          await session.call('PATCH', `/v1/admin/routers/${segment(editing)}`, body);
          done = `Router "${editing}" saved.`;
        } else {
          await session.call('POST', '/v1/admin/routers', { name: v.name.trim(), ...body });
          done = `Router "${v.name.trim()}" created.`;
        }
        stopEditing();
        await reload(done);
        readLive();
      },
      PARAMS,
    );

  const remove = async (router: Router) => {
    try {
      await session.call('DELETE', `/v1/admin/routers/${segment(router.name)}`);
      if (editing === router.name) stopEditing();
      await reload(`Router "${router.name}" deleted${router.providers.length ? ` with its ${router.providers.length} provider(s)` : ''}.`);
    } catch (e) {
      setError(readable(e));
    }
  };

  return (
    <section>
      <h1 tabIndex={-1}>Routers</h1>
      <p class="lead">
        A router is a model name users call. Prices are per one million tokens (and per minute of audio for transcription routers), in the
        money of user budgets.
      </p>
      <LoadError error={error} />
      {routers && routers.length === 0 && <p>No routers yet.</p>}
      {routers && routers.length > 0 && (
        <ListTable
          caption="Routers"
          columns={[
            'Name',
            'Type',
            'Aliases',
            'Strategy',
            'Mode',
            num('Waiting'),
            'Fallbacks',
            num('Prompt / 1M'),
            num('Completion / 1M'),
            num('Audio / min'),
            num('Providers'),
          ]}
          actions
        >
          {routers.map((r) => (
            <tr key={r.name}>
              <th scope="row">{r.name}</th>
              <td>{r.type}</td>
              <td>{r.aliases.join(', ') || '–'}</td>
              <td>{r.load_balancing_strategy}</td>
              <td>{liveOf(r.name)?.routing_mode ?? r.routing_mode ?? '–'}</td>
              <td class="num">{liveOf(r.name)?.queue_depth ?? '–'}</td>
              <td>{r.fallbacks.join(' → ') || '–'}</td>
              <td class="num">{price(r.costs.prompt_tokens)}</td>
              <td class="num">{price(r.costs.completion_tokens)}</td>
              <td class="num">{price(r.costs.audio_minutes)}</td>
              <td class="num">{r.providers.length}</td>
              <EditDeleteCell
                name={r.name}
                question={r.providers.length ? `Delete "${r.name}" and its ${r.providers.length} provider(s)?` : `Delete "${r.name}"?`}
                onEdit={() => edit(r)}
                onDelete={() => remove(r)}
              />
            </tr>
          ))}
        </ListTable>
      )}
      <CreateOrEditForm form={form} kind="router" editing={editing} headingRef={formHeading} onSubmit={save} onCancel={stopEditing}>
        <div class="row">
          <TextField
            form={form}
            name="name"
            label="Name"
            required
            disabled={editing !== null}
            hint={editing ? 'A name cannot be changed.' : 'Called as "model".'}
          />
          <SelectField form={form} name="type" label="Type" required options={options(ROUTER_TYPES)} />
          <SelectField form={form} name="strategy" label="Load balancing strategy" options={options(STRATEGIES)} />
          <SelectField
            form={form}
            name="mode"
            label="Routing mode"
            options={[['', "the gateway's setting"], ...options(ROUTING_MODES)]}
            hint="queue: router workers choose, fleet-wide, within each provider's max concurrent."
          />
        </div>
        <TextField form={form} name="aliases" label="Aliases" hint="Other names that call this router, separated by commas." />
        <div class="row">
          <TextField
            form={form}
            name="fallbacks"
            label="Fallbacks"
            hint="Routers tried in order, separated by commas, when this one cannot serve (its providers failed or are down)."
          />
          <SelectField
            form={form}
            name="contextFallback"
            label="Too long for the context"
            options={[
              ['', 'default: to a fallback when there are fallbacks'],
              ['true', 'go to the first fallback it fits'],
              ['false', 'refuse with 400'],
            ]}
          />
        </div>
        <div class="row">
          <TextField form={form} name="prompt" label="Prompt token cost (per 1M tokens)" inputMode="decimal" required />
          <TextField form={form} name="completion" label="Completion token cost (per 1M tokens)" inputMode="decimal" required />
          <TextField
            form={form}
            name="audio"
            label="Audio cost (per minute)"
            inputMode="decimal"
            required
            hint="Transcription (automatic-speech-recognition) routers: charged per minute of audio."
          />
        </div>
        <div class="row">
          <TextField
            form={form}
            name="cached"
            label="Cached prompt token cost (per 1M tokens, optional)"
            inputMode="decimal"
            hint="Prompt tokens the backend read from its prompt cache (vLLM's and OpenAI's cached_tokens, Anthropic's cache reads). Empty: the prompt price."
          />
          <TextField
            form={form}
            name="cacheWrite"
            label="Cache-write prompt token cost (per 1M tokens, optional)"
            inputMode="decimal"
            hint="Prompt tokens the backend wrote to its prompt cache (Anthropic's cache writes). Empty: the prompt price."
          />
        </div>
        <div class="row">
          <TextField form={form} name="maxContext" label="Max context length (tokens)" inputMode="numeric" required />
          <TextField
            form={form}
            name="maxCompletion"
            label="Max completion tokens (optional)"
            inputMode="numeric"
            hint="Bounds what a request without max_tokens holds of a budget."
          />
        </div>
      </CreateOrEditForm>
    </section>
  );
}

function validate(v: Values<RouterField>) {
  const aliases = splitList(v.aliases);
  const badAlias = aliases.map((a) => modelName(a)).find(Boolean);
  const fallbacks = splitList(v.fallbacks);
  const badFallback = fallbacks.map((a) => modelName(a)).find(Boolean);
  return {
    fallbacks: badFallback
      ? `Each fallback: ${badFallback}`
      : fallbacks.includes(v.name.trim())
        ? 'A router cannot be its own fallback.'
        : new Set(fallbacks).size !== fallbacks.length
          ? 'A fallback is listed twice.'
          : undefined,
    name: check(v.name.trim(), [required, modelName]) ?? undefined,
    aliases: badAlias ? `Each alias: ${badAlias}` : new Set(aliases).size !== aliases.length ? 'An alias is listed twice.' : undefined,
    prompt: check(v.prompt, [required, decimal(9)]) ?? undefined,
    completion: check(v.completion, [required, decimal(9)]) ?? undefined,
    cached: check(v.cached, [decimal(9)], true) ?? undefined,
    cacheWrite: check(v.cacheWrite, [decimal(9)], true) ?? undefined,
    audio: check(v.audio, [required, decimal(9)]) ?? undefined,
    maxContext: check(v.maxContext, [required, integer(1, 100_000_000)]) ?? undefined,
    maxCompletion: check(v.maxCompletion, [integer(1, 100_000_000)], true) ?? undefined,
  };
}

/** A price the router may leave unset: '' when it does. */
function optionalPrice(value: number | undefined): string {
  return value === undefined ? '' : price(value);
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

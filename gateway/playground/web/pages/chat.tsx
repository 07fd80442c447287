// Chat: pick a model, send messages, watch the answer stream in, and read under each answer
// what it used: tokens, cost, energy and emissions. Refusals (402 budget, 429 rate limit, 404
// model) are shown as sentences where the answer would have been.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Model, ModelList, Usage } from '../api.ts';
import { streamChat, type ChatMessage } from '../chat-stream.ts';
import { useSession } from '../context.ts';
import { cachedNote, money, tokens } from '../format.ts';
import { readable } from '../messages.ts';
import { LoadError } from '../components/notice.tsx';
import { UsageLine } from '../components/usage-line.tsx';

/** Router types that /v1/chat/completions accepts. */
const CHAT_TYPES = ['text-generation', 'image-text-to-text'];

interface Turn {
  readonly id: number;
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly usage?: Usage;
  readonly error?: string;
  readonly streaming?: boolean;
  /** The model the answer came from. */
  readonly model?: string;
}

export function ChatPage() {
  const session = useSession();
  const [models, setModels] = useState<Model[] | null>(null);
  const [model, setModel] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [problem, setProblem] = useState<{ field: 'message' | 'max-tokens'; text: string } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const messageRef = useRef<HTMLTextAreaElement>(null);
  const nextId = useRef(0);
  const streaming = turns.some((t) => t.streaming);

  useEffect(() => {
    session
      .call<ModelList>('GET', '/v1/models')
      .then((list) => {
        const chat = list.data.filter((m) => CHAT_TYPES.includes(m.type));
        setModels(chat);
        setModel((current) => current || chat[0]?.id || '');
      })
      .catch((e) => setLoadError(readable(e)));
    return () => abort.current?.abort();
  }, []);

  const update = (id: number, change: (turn: Turn) => Turn) => setTurns((all) => all.map((t) => (t.id === id ? change(t) : t)));

  const send = async (event?: Event) => {
    event?.preventDefault();
    if (streaming) return;
    const text = draft.trim();
    const max = maxTokens.trim();
    if (!text) return fail('message', 'Write a message first.');
    if (max && !/^[1-9]\d{0,6}$/.test(max)) return fail('max-tokens', 'A whole number from 1 to 9,999,999, or empty.');
    setProblem(null);
    const history: ChatMessage[] = turns.filter((t) => !t.error && t.content).map((t) => ({ role: t.role, content: t.content }));
    const asked: Turn = { id: nextId.current++, role: 'user', content: text };
    const answer: Turn = { id: nextId.current++, role: 'assistant', content: '', streaming: true, model };
    setTurns((all) => [...all, asked, answer]);
    setDraft('');
    const controller = new AbortController();
    abort.current = controller;
    let usage: Usage | undefined;
    try {
      await streamChat(
        session.key,
        { model, messages: [...history, { role: 'user', content: text }], ...(max ? { max_tokens: Number(max) } : {}) },
        {
          onText: (piece) => update(answer.id, (t) => ({ ...t, content: t.content + piece })),
          onUsage: (u) => {
            usage = u;
            update(answer.id, (t) => ({ ...t, usage: u }));
          },
        },
        controller.signal,
      );
      session.announce(usage ? `Answer received: ${tokens(usage.total_tokens)} tokens, cost ${money(usage.cost)}.` : 'Answer received.');
    } catch (error) {
      if (controller.signal.aborted) {
        session.announce('Answer stopped.');
      } else {
        const message = readable(error);
        update(answer.id, (t) => ({ ...t, error: message }));
        session.announce(message);
      }
    } finally {
      update(answer.id, (t) => ({ ...t, streaming: false }));
      abort.current = null;
      messageRef.current?.focus();
    }
  };

  const fail = (field: 'message' | 'max-tokens', text: string) => {
    setProblem({ field, text });
    document.getElementById(field === 'message' ? 'chat-message' : 'chat-max-tokens')?.focus();
  };

  // Enter sends, Shift+Enter starts a new line, as in most chat tools.
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send();
    }
  };

  return (
    <section class="chat">
      <h1 tabIndex={-1}>Chat</h1>
      <LoadError error={loadError} />
      {models && models.length === 0 && <p>No chat model is configured yet. An admin adds one under Routers and Providers.</p>}
      <ol class="transcript" aria-label="Conversation">
        {turns.map((turn) => (
          <li key={turn.id} class={`turn ${turn.role}`} aria-busy={turn.streaming ? 'true' : undefined}>
            <p class="speaker">{turn.role === 'user' ? 'You' : `Assistant (${turn.model})`}</p>
            {turn.content && <p class="text">{turn.content}</p>}
            {turn.streaming && !turn.content && <p class="hint">Waiting for the answer…</p>}
            {turn.usage && (
              <UsageLine
                usage={turn.usage}
                label="Usage of this answer"
                measure="Tokens"
                amount={`${tokens(turn.usage.prompt_tokens)} prompt${cachedNote(turn.usage.prompt_tokens_details?.cached_tokens ?? 0)} + ${tokens(turn.usage.completion_tokens)} completion = ${tokens(turn.usage.total_tokens)}`}
              />
            )}
            {turn.error && (
              <p class="form-error" role="alert">
                {turn.error}
              </p>
            )}
          </li>
        ))}
      </ol>
      <form class="form composer" onSubmit={send} aria-label="Send a message" noValidate>
        <div class="row">
          <div class="field">
            <label for="chat-model">Model</label>
            <select id="chat-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
              {(models ?? []).flatMap((m) => [
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>,
                ...m.aliases.map((alias) => (
                  <option key={`${m.id}:${alias}`} value={alias}>
                    {`${alias} (alias of ${m.id})`}
                  </option>
                )),
              ])}
            </select>
          </div>
          <div class={`field${problem?.field === 'max-tokens' ? ' invalid' : ''}`}>
            <label for="chat-max-tokens">Max tokens (optional)</label>
            <input
              id="chat-max-tokens"
              inputMode="numeric"
              value={maxTokens}
              aria-invalid={problem?.field === 'max-tokens' ? 'true' : undefined}
              aria-describedby={problem?.field === 'max-tokens' ? 'chat-max-tokens-problem' : 'chat-max-tokens-hint'}
              onInput={(e) => setMaxTokens(e.currentTarget.value)}
            />
            <p class="hint" id="chat-max-tokens-hint">
              Bounds the answer, and so what it holds of your budget.
            </p>
            {problem?.field === 'max-tokens' && (
              <p class="problem" id="chat-max-tokens-problem">
                {problem.text}
              </p>
            )}
          </div>
        </div>
        <div class={`field${problem?.field === 'message' ? ' invalid' : ''}`}>
          <label for="chat-message">Message</label>
          <textarea
            id="chat-message"
            ref={messageRef}
            rows={3}
            value={draft}
            aria-invalid={problem?.field === 'message' ? 'true' : undefined}
            aria-describedby={problem?.field === 'message' ? 'chat-message-problem chat-message-hint' : 'chat-message-hint'}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={onKeyDown}
          />
          <p class="hint" id="chat-message-hint">
            Enter sends; Shift+Enter adds a line.
          </p>
          {problem?.field === 'message' && (
            <p class="problem" id="chat-message-problem">
              {problem.text}
            </p>
          )}
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={!model} aria-disabled={streaming}>
            {streaming ? 'Answering…' : 'Send'}
          </button>
          {streaming && (
            <button type="button" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          )}
          {!streaming && turns.length > 0 && (
            <button type="button" onClick={() => setTurns([])}>
              New conversation
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

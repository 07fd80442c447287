// Prompts and answers as span attributes, only when an operator turns it on
// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; docs/observability.md). In the GenAI
// conventions' shape: gen_ai.input.messages and gen_ai.output.messages are JSON arrays of
// {role, parts: [{type: 'text', content}]}; a part that is not text (an image, a tool call) keeps
// its type and not its data. A prompt, and an answer, each keep at most maxChars characters of
// text: the text past that is cut, and tollgate.content.truncated says so.

export interface MessagePart {
  readonly type: string;
  readonly content?: string;
}

export interface ContentMessage {
  readonly role: string;
  readonly parts: MessagePart[];
}

export interface Captured {
  /** The messages as the attribute's JSON. */
  readonly json: string;
  readonly truncated: boolean;
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Cuts texts so that together they keep at most `maxChars` characters. */
class TextBudget {
  #left: number;
  truncated = false;

  constructor(maxChars: number) {
    this.#left = maxChars;
  }

  get spent(): boolean {
    return this.#left <= 0;
  }

  take(text: string): string {
    if (text.length <= this.#left) {
      this.#left -= text.length;
      return text;
    }
    this.truncated = true;
    const kept = text.slice(0, this.#left);
    this.#left = 0;
    return kept;
  }
}

/** The parts of a message's content as the APIs write it: a string, or an array of typed parts. */
function partsOf(content: unknown, budget: TextBudget): MessagePart[] {
  if (typeof content === 'string') return [{ type: 'text', content: budget.take(content) }];
  if (!Array.isArray(content)) return [];
  const parts: MessagePart[] = [];
  for (const part of content) {
    if (typeof part === 'string') parts.push({ type: 'text', content: budget.take(part) });
    else if (isObject(part) && typeof part.text === 'string') parts.push({ type: 'text', content: budget.take(part.text) });
    else if (isObject(part)) parts.push({ type: typeof part.type === 'string' ? part.type : 'unknown' });
  }
  return parts;
}

/**
 * The prompt of a request body, whichever API wrote it: chat and Messages (`messages`, with
 * Anthropic's `system`), Responses (`instructions`, `input`), completions (`prompt`).
 */
export function inputMessages(body: unknown, maxChars: number): Captured | undefined {
  if (!isObject(body)) return undefined;
  const budget = new TextBudget(maxChars);
  const messages: ContentMessage[] = [];
  const add = (role: unknown, content: unknown) => {
    if (budget.spent) {
      budget.truncated = true;
      return;
    }
    messages.push({ role: typeof role === 'string' ? role : 'user', parts: partsOf(content, budget) });
  };
  if (body.system !== undefined) add('system', body.system);
  if (typeof body.instructions === 'string') add('system', body.instructions);
  for (const list of [body.messages, body.input]) {
    if (typeof list === 'string') add('user', list);
    else if (Array.isArray(list)) for (const message of list) if (isObject(message)) add(message.role, message.content);
  }
  if (typeof body.prompt === 'string' || Array.isArray(body.prompt)) add('user', body.prompt);
  if (messages.length === 0) return undefined;
  return { json: JSON.stringify(messages), truncated: budget.truncated };
}

/** The answer's text, as the assistant's one message. */
export function outputMessages(text: string, maxChars: number): Captured {
  const budget = new TextBudget(maxChars);
  const message: ContentMessage = { role: 'assistant', parts: [{ type: 'text', content: budget.take(text) }] };
  return { json: JSON.stringify([message]), truncated: budget.truncated };
}

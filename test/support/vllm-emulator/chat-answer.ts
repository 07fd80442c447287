// The bodies of a chat completion answer as vLLM's OpenAI server writes them: the JSON answer,
// and the event stream's chunks (the role first, one chunk a token, the last token's chunk with
// the finish reason, the usage chunk when stream_options.include_usage, then [DONE]). The text
// is filler words, one a token.
import { randomUUID } from 'node:crypto';
import type { RequestOutcome } from './engine.ts';

const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'do', 'eiusmod', 'tempor'];

/** The text of the completion's token `index` (from 0). */
export function tokenText(index: number): string {
  return (index === 0 ? '' : ' ') + WORDS[index % WORDS.length];
}

export interface AnswerFrame {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  /** Report prompt_tokens_details (vLLM's --enable-prompt-tokens-details). */
  readonly details: boolean;
  /** "length" when the caller set max_tokens, else "stop" (the emulated model ends on its own). */
  readonly finishReason: 'length' | 'stop';
}

export function answerFrame(model: string, details: boolean, lengthSet: boolean): AnswerFrame {
  return {
    id: `chatcmpl-${randomUUID().replaceAll('-', '')}`,
    created: Math.floor(Date.now() / 1000),
    model,
    details,
    finishReason: lengthSet ? 'length' : 'stop',
  };
}

/** vLLM's UsageInfo; prompt_tokens_details is null when details are off (the stream's usage chunk leaves it out). */
export function usage(outcome: RequestOutcome, details: boolean): Record<string, unknown> {
  return {
    prompt_tokens: outcome.promptTokens,
    total_tokens: outcome.promptTokens + outcome.completionTokens,
    completion_tokens: outcome.completionTokens,
    prompt_tokens_details: details ? { cached_tokens: outcome.cachedTokens } : null,
  };
}

export function jsonAnswer(frame: AnswerFrame, outcome: RequestOutcome): object {
  let content = '';
  for (let i = 0; i < outcome.completionTokens; i++) content += tokenText(i);
  return {
    id: frame.id,
    object: 'chat.completion',
    created: frame.created,
    model: frame.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, tool_calls: [] },
        logprobs: null,
        finish_reason: frame.finishReason,
        stop_reason: null,
      },
    ],
    usage: usage(outcome, frame.details),
    prompt_logprobs: null,
  };
}

function event(frame: AnswerFrame, choices: object[], extra: object = {}): string {
  const chunk = { id: frame.id, object: 'chat.completion.chunk', created: frame.created, model: frame.model, choices, ...extra };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The first chunk: the assistant's role, no text yet. */
export function roleEvent(frame: AnswerFrame): string {
  return event(frame, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
}

/** The chunk of token `index`; the last one carries the finish reason. */
export function tokenEvent(frame: AnswerFrame, index: number, last: boolean): string {
  const end = last ? { finish_reason: frame.finishReason, stop_reason: null } : { finish_reason: null };
  return event(frame, [{ index: 0, delta: { content: tokenText(index) }, logprobs: null, ...end }]);
}

export function usageEvent(frame: AnswerFrame, outcome: RequestOutcome): string {
  const { prompt_tokens_details, ...counts } = usage(outcome, frame.details);
  return event(frame, [], { usage: frame.details ? { ...counts, prompt_tokens_details } : counts });
}

export const DONE_EVENT = 'data: [DONE]\n\n';

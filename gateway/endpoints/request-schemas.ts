// What each inference endpoint accepts. Objects are loose: fields the gateway does not know
// (tools, response_format, ...) pass through to the backend untouched.
import { z } from 'zod';
import { type AudioFile, isAudioFile } from './audio-file.ts';

const MaxTokens = z.number().int().min(1).max(10_000_000);

const ContentPart = z.looseObject({ type: z.string() });
const Message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  name: z.string().optional(),
});

const Streaming = {
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
};

export const Chat = z.looseObject({
  model: z.string(),
  messages: z.array(Message).min(1, 'must hold at least one message'),
  max_tokens: MaxTokens.nullish(),
  max_completion_tokens: MaxTokens.nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  ...Streaming,
});

/** A prompt or an input to embed: a string, strings, token ids, or arrays of token ids. */
type TextInput = string | string[] | number[] | number[][];

/**
 * TextInput checked in one pass rather than as a union of array schemas: the union tried each
 * branch element by element, with an issue for every element that failed, so 100,000 token ids
 * took 45 ms of the event loop.
 */
const TextInput = z.custom<TextInput>().superRefine((value, ctx) => {
  const problem = textInputProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const TEXT_INPUT_SHAPES = 'must be a string, an array of strings, an array of token ids, or an array of arrays of token ids';

function textInputProblem(value: unknown): string | undefined {
  if (typeof value === 'string') return undefined;
  if (!Array.isArray(value)) return TEXT_INPUT_SHAPES;
  if (value.length === 0) return 'must not be empty';
  const first = value[0];
  if (typeof first === 'string') return value.every((item) => typeof item === 'string') ? undefined : TEXT_INPUT_SHAPES;
  if (Array.isArray(first)) return value.every((item) => Array.isArray(item) && isTokenIds(item)) ? undefined : TEXT_INPUT_SHAPES;
  return isTokenIds(value) ? undefined : TEXT_INPUT_SHAPES;
}

function isTokenIds(items: readonly unknown[]): boolean {
  for (const item of items) if (!Number.isSafeInteger(item) || (item as number) < 0) return false;
  return true;
}

export const Completions = z.looseObject({
  model: z.string(),
  prompt: TextInput,
  max_tokens: MaxTokens.nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  ...Streaming,
});

export const Embeddings = z.looseObject({
  model: z.string(),
  input: TextInput,
  dimensions: z.number().int().min(1).max(65_536).optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
});

export const Rerank = z.looseObject({
  model: z.string(),
  query: z.string().min(1, 'must not be empty'),
  documents: z.array(z.union([z.string(), z.looseObject({ text: z.string() })])).min(1, 'must hold at least one document'),
  top_n: z.number().int().min(1).optional(),
  return_documents: z.boolean().optional(),
});

/** What a transcription's answer is written as (OpenAI's names); json when absent. */
export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;

/** A multipart form (multipart-body.ts): its file, and its other fields as the strings they were sent as. */
export const Transcription = z.looseObject({
  model: z.string(),
  file: z.custom<AudioFile>(isAudioFile, 'must be an audio file, sent as a file part of the form'),
  language: z.string().max(32).optional(),
  prompt: z.string().max(100_000).optional(),
  response_format: z.enum(TRANSCRIPT_FORMATS).optional(),
  temperature: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*$/, 'must be a number from 0 to 1')
    .refine((text) => Number(text) <= 1, 'must be a number from 0 to 1')
    .optional(),
  stream: z.enum(['false'], { error: 'streamed transcriptions are not served; leave stream out' }).optional(),
});

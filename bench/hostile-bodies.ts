// The hostile requests of `npm run bench -- --hostile` (bench/hostile.ts): the bodies of issue 26's
// findings 3 and 4 (millions of tiny JSON values, huge token arrays, many keys, deep nesting, a
// 10 MB prompt; an MP3 whose length needs every frame read, a FLAC claiming 55,555 hours, a run
// of bytes MP3 sync search chokes on), each at the largest size the gateway's default bounds let
// through (a caller's worst that is served or refused after the checks), and past them (refused
// at the bound). Built once, as bytes, by whoever sends them.
import { flacClaiming, syncStorm, vbrMp3 } from '../test/support/audio.ts';

export interface Hostile {
  readonly name: string;
  readonly path: string;
  /** Which bench user sends it: `broke` has no budget left (the finding's case), `rich` has room. */
  readonly user: 'broke' | 'rich';
  readonly contentType: string;
  readonly body: Buffer;
  /** Sent again and again by the hostile clients of the concurrent phase. */
  readonly loop: boolean;
  /** Not one of issue 26's cases (bodies of many small values, audio): measured, not held to its goal. */
  readonly besideGoal?: string;
}

/** The default bounds (gateway/config/settings.ts): --max-json-values, --max-json-depth, --max-json-keys, --body-limit, --max-audio-bytes. */
const VALUES = Number(process.env.TOLLGATE_MAX_JSON_VALUES ?? 50_000);
const DEPTH = 128;
const KEYS = 1024;
const BODY_BYTES = 10 * 1024 * 1024;
const AUDIO_BYTES = 25 * 1024 * 1024;

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const text = (value: string) => Buffer.from(value);
const repeat = (piece: string, times: number, last: string) => `${piece.repeat(times)}${last}`;

/** A form with the model and one file, as the OpenAI SDK sends a transcription. */
function form(model: string, file: Buffer, filename: string, type: string): { body: Buffer; contentType: string } {
  const boundary = 'tollgate-bench-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

export function hostileRequests(): Hostile[] {
  const JSON_TYPE = 'application/json';
  const chat = (user: Hostile['user'], name: string, body: Buffer, loop = true): Hostile => ({
    name,
    path: '/v1/chat/completions',
    user,
    contentType: JSON_TYPE,
    body,
    loop,
  });
  // Each `[1]` is two values (the array, and the comma after it); each part or block three.
  const arrays = Math.floor(VALUES / 2) - 10;
  const parts = Math.floor(VALUES / 3) - 10;
  const keyed = Math.floor(VALUES / (KEYS + 1)) - 1;
  const distinctKeys = Array.from(
    { length: keyed },
    (_, j) => `{${Array.from({ length: KEYS - 1 }, (_, i) => `"k${j}_${i}":0`).join(',')}}`,
  );
  const mp3 = form('whisper', vbrMp3(AUDIO_BYTES - 1024).bytes, 'speech.mp3', 'audio/mpeg');
  const flac = form('whisper', flacClaiming(55_555 * 3600, 10), 'forged.flac', 'audio/flac');
  const storm = form('whisper', syncStorm(AUDIO_BYTES - 1024), 'storm.mp3', 'audio/mpeg');
  return [
    {
      name: `embeddings, ${arrays.toLocaleString('en')} one-token arrays (the most allowed)`,
      path: '/v1/embeddings',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(`{"model":"embed","input":[${repeat('[1],', arrays - 1, '[1]')}]}`),
      loop: true,
    },
    {
      name: 'embeddings, 1.2 million one-token arrays (4.8 MB: refused at the bound)',
      path: '/v1/embeddings',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(`{"model":"embed","input":[${repeat('[1],', 1_199_999, '[1]')}]}`),
      loop: true,
    },
    {
      name: `embeddings, ${(VALUES - 10).toLocaleString('en')} token ids (the most allowed)`,
      path: '/v1/embeddings',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(`{"model":"embed","input":[${repeat('1,', VALUES - 11, '1')}]}`),
      loop: true,
    },
    {
      name: 'embeddings, 4.9 million token ids (refused at the bound)',
      path: '/v1/embeddings',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(`{"model":"embed","input":[${repeat('1,', 4_899_999, '1')}]}`),
      loop: true,
    },
    chat(
      'broke',
      `chat, ${keyed} objects of ${KEYS - 1} distinct keys (the most allowed)`,
      text(`{"model":"chat","messages":[{"role":"user","content":"hi"}],"tools":[${distinctKeys.join(',')}]}`),
    ),
    chat(
      'broke',
      'chat, 500,000 unknown fields (refused at the bound)',
      text(
        `{"model":"chat","messages":[{"role":"user","content":"hi"}],${Array.from({ length: 500_000 }, (_, i) => `"f${i}":0`).join(',')}}`,
      ),
    ),
    chat(
      'broke',
      `chat, ${parts.toLocaleString('en')} empty text parts (the most allowed)`,
      text(
        `{"model":"chat","messages":[{"role":"user","content":[${repeat('{"type":"text","text":""},', parts - 1, '{"type":"text","text":""}')}]}]}`,
      ),
    ),
    chat(
      'broke',
      'chat, 400,000 empty text parts (refused at the bound)',
      text(
        `{"model":"chat","messages":[{"role":"user","content":[${repeat('{"type":"text","text":""},', 399_999, '{"type":"text","text":""}')}]}]}`,
      ),
    ),
    {
      name: `Messages, ${parts.toLocaleString('en')} text blocks (the most allowed)`,
      path: '/v1/messages',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(
        `{"model":"chat","max_tokens":5,"messages":[{"role":"user","content":[${repeat('{"type":"text","text":"x"},', parts - 1, '{"type":"text","text":"x"}')}]}]}`,
      ),
      loop: true,
    },
    {
      name: `Responses, ${parts.toLocaleString('en')} input items (the most allowed)`,
      path: '/v1/responses',
      user: 'broke',
      contentType: JSON_TYPE,
      body: text(
        `{"model":"chat","store":false,"input":[${repeat('{"role":"user","content":"x"},', parts - 1, '{"role":"user","content":"x"}')}]}`,
      ),
      loop: true,
    },
    chat(
      'broke',
      `chat, arrays nested ${DEPTH} deep (the most allowed)`,
      text(`{"model":"chat","messages":[{"role":"user","content":"hi"}],"x":${'['.repeat(DEPTH - 1)}${']'.repeat(DEPTH - 1)}}`),
    ),
    chat(
      'broke',
      'chat, arrays nested 5,000 deep (refused at the bound)',
      text(`{"model":"chat","messages":[{"role":"user","content":"hi"}],"x":${'['.repeat(5000)}${']'.repeat(5000)}}`),
    ),
    {
      ...chat(
        'broke',
        'chat, a 10 MB prompt of one unspaced word (the largest body)',
        json({ model: 'chat', messages: [{ role: 'user', content: 'x'.repeat(BODY_BYTES - 100) }] }),
        false,
      ),
      besideGoal: 'one long string, not many small values: decoding it and parsing it take a turn each',
    },
    {
      name: 'transcription, a 25 MB VBR MP3 without a Xing header (every frame read)',
      path: '/v1/audio/transcriptions',
      user: 'rich',
      ...mp3,
      loop: false,
    },
    { name: 'transcription, a 242-byte FLAC claiming 55,555 hours', path: '/v1/audio/transcriptions', user: 'rich', ...flac, loop: true },
    {
      name: 'transcription, 25 MB of MP3 sync bytes (a scan that runs out of time)',
      path: '/v1/audio/transcriptions',
      user: 'rich',
      ...storm,
      loop: false,
    },
  ];
}

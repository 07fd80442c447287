// OpenAI's audio transcriptions through the official `openai` SDK, against a gateway whose
// automatic-speech-recognition router forwards to a Whisper-like fake on loopback: the WAV the
// test writes goes through as a multipart form, each response format comes back, the audio's
// minutes are priced, held and charged as the usage record says, and an upload past the limit is
// refused with 413 while it is still being sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend, FormFile } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { eventually } from '../../support/eventually.ts';
import { wav } from '../../support/wav.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const MAX_AUDIO_BYTES = 1024 * 1024;
const key = generateKey().secret;
const brokeKey = generateKey().secret;
const limitedKey = generateKey().secret;
const goneKey = generateKey().secret;
let fake: FakeBackend;
let gw: TestGateway;
let client: OpenAI;
const auth = { authorization: `Bearer ${key}` };

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [
        { id: 'dev', name: 'Dev', budget: '1000', keys: [{ name: 'k', key: '${KEY}' }] },
        { id: 'broke', name: 'Broke', budget: '0.05', keys: [{ name: 'k', key: '${BROKE}' }] },
        { id: 'limited', name: 'Limited', rate_limits: { requests_per_minute: 1 }, keys: [{ name: 'k', key: '${LIMITED}' }] },
        { id: 'gone', name: 'Gone', budget: '10', keys: [{ name: 'k', key: '${GONE}' }] },
      ],
      models: [
        {
          id: 'whisper',
          type: 'automatic-speech-recognition',
          costs: { audio_minutes: 0.6 },
          providers: [
            { model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' }, carbon: { params_total_b: 1.55, zone: 'FRA' } },
          ],
        },
        {
          id: 'whisper-free',
          type: 'automatic-speech-recognition',
          providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
        { id: 'chat', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', args: { api_url: '${FAKE}' } }] },
      ],
    },
    {
      env: { KEY: key, BROKE: brokeKey, LIMITED: limitedKey, GONE: goneKey, FAKE: fake.url },
      settings: { maxAudioBytes: MAX_AUDIO_BYTES },
    },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

type ErrorBody = { error: { message: string; code: string } };
type Priced = { cost: number; seconds: number; prompt_tokens: number; completion_tokens: number; carbon: { kWh: number } };

describe('audio transcriptions through the official SDK', () => {
  test('a 3-second WAV: the transcript, and 3 seconds at 0.6 a minute cost 0.03, charged and recorded as such', async () => {
    const before = (await gw.get('/v1/me', auth)).body.spent;
    const transcript = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(3), 'hello.wav', { type: 'audio/wav' }),
      language: 'en',
      prompt: 'A greeting.',
      temperature: 0,
    });
    assert.equal(transcript.text, 'Hello from the fake backend');
    const usage = transcript.usage as unknown as Priced & { type: string };
    assert.equal(usage.type, 'duration');
    assert.equal(usage.seconds, 3);
    assert.equal(usage.cost, 0.03);
    // The backend reported no tokens: none are charged or counted, and no carbon is estimated
    // (the method models decoded tokens, not the encoding of audio).
    assert.equal(usage.prompt_tokens, 0);
    assert.equal(usage.completion_tokens, 0);
    assert.equal(usage.carbon.kWh, 0);

    // The backend got the form as sent, its model the provider's, the file's bytes unchanged.
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/audio/transcriptions');
    assert.equal(sent.body.model, 'openai/whisper-large-v3');
    assert.equal(sent.body.language, 'en');
    assert.equal(sent.body.prompt, 'A greeting.');
    assert.equal(sent.body.temperature, '0');
    const file = sent.body.file as FormFile;
    assert.equal(file.filename, 'hello.wav');
    assert.deepEqual(file.bytes, wav(3));
    assert.equal(sent.headers.authorization, undefined, 'the provider has no key: none is sent');

    const record = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=1', auth)).body.data;
      return data[0]?.endpoint === 'transcriptions' && data[0];
    }, 'the transcription recorded');
    assert.equal(record.model, 'whisper');
    assert.equal(record.audio_seconds, 3);
    assert.equal(record.cost, 0.03);
    assert.equal(record.status, 200);
    const me = await eventually(async () => {
      const now = (await gw.get('/v1/me', auth)).body;
      return now.spent !== before && now;
    }, 'the charge settled');
    assert.equal(Math.round((me.spent - before) * 1e6), 30_000);
  });

  test("verbose_json: the backend's duration is what is charged (2.5 s of a 3 s file: 0.025)", async () => {
    fake.once({ audioSeconds: 2.5 });
    const transcript = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(3), 'a.wav', { type: 'audio/wav' }),
      response_format: 'verbose_json',
    });
    assert.equal(transcript.duration, 2.5);
    assert.equal(transcript.segments?.[0]?.text, 'Hello from the fake backend');
    const usage = (transcript as unknown as { usage: Priced }).usage;
    assert.equal(usage.seconds, 2.5);
    assert.equal(usage.cost, 0.025);
  });

  test('a backend that reports more audio than the file holds is charged for the file, and the anomaly recorded', async () => {
    fake.once({ audioSeconds: 600 });
    const transcript = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(2), 'a.wav', { type: 'audio/wav' }),
      response_format: 'verbose_json',
    });
    assert.equal((transcript as unknown as { usage: Priced }).usage.cost, 0.02);
    const record = await eventually(async () => {
      const data = (await gw.get('/v1/usage?limit=1', auth)).body.data;
      return data[0]?.usage_anomaly && data[0];
    }, 'the anomaly recorded');
    assert.equal(record.usage_anomaly, 'audio_over_limit');
    assert.equal(record.audio_seconds, 2);
  });

  test('tokens a backend reports (gpt-4o-transcribe) are priced besides the minutes', async () => {
    fake.once({ usage: { type: 'tokens', input_tokens: 40, output_tokens: 6, total_tokens: 46 } });
    const transcript = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(1), 'a.wav', { type: 'audio/wav' }),
    });
    const usage = transcript.usage as unknown as Priced & { type: string; input_tokens: number };
    assert.equal(usage.type, 'tokens');
    assert.equal(usage.input_tokens, 40);
    assert.equal(usage.prompt_tokens, 40);
    assert.equal(usage.completion_tokens, 6);
    assert.equal(usage.seconds, 1);
    assert.equal(usage.cost, 0.01);
    assert.ok(usage.carbon.kWh > 0, 'the decoded text has a carbon estimate');
  });

  test('the metrics count transcriptions as their own endpoint', async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(
      metrics,
      /tollgate_requests_total\{router="whisper",provider="[^"]+",endpoint="transcriptions",api="openai",status="200"\} [1-9]/,
    );
  });

  test('text, SRT and WebVTT come back as the backend wrote them, the usage in x-tollgate-usage', async () => {
    const text = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(1), 'a.wav', { type: 'audio/wav' }),
      response_format: 'text',
    });
    assert.equal(String(text).trim(), 'Hello from the fake backend');
    for (const format of ['srt', 'vtt'] as const) {
      const form = new FormData();
      form.append('model', 'whisper');
      form.append('response_format', format);
      form.append('file', new Blob([wav(1)], { type: 'audio/wav' }), 'a.wav');
      const response = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
      assert.equal(response.status, 200);
      const body = await response.text();
      assert.match(body, format === 'srt' ? /^1\n00:00:00,000 --> 00:00:01,000\nHello/ : /^WEBVTT\n\n00:00:00\.000 --> /);
      assert.equal(response.headers.get('content-type'), format === 'srt' ? 'text/plain; charset=utf-8' : 'text/vtt; charset=utf-8');
      const usage = JSON.parse(response.headers.get('x-tollgate-usage')!) as Priced;
      assert.equal(usage.seconds, 1);
      assert.equal(usage.cost, 0.01);
    }
  });
});

describe("the spec's errors, budgets and the upload limit", () => {
  test('an unknown model is 404 and a chat router 400, as on every endpoint', async () => {
    const file = await toFile(wav(1), 'a.wav', { type: 'audio/wav' });
    await assert.rejects(
      client.audio.transcriptions.create({ model: 'nope', file }),
      (error: unknown) => error instanceof OpenAI.NotFoundError && error.message.includes('Model not found'),
    );
    await assert.rejects(
      client.audio.transcriptions.create({ model: 'chat', file }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.message.includes('Wrong model type'),
    );
  });

  test('a chat request to a transcription router is 400 Wrong model type', async () => {
    const answer = await gw.post('/v1/chat/completions', { model: 'whisper', messages: [{ role: 'user', content: 'hi' }] }, auth);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.message, 'Wrong model type');
  });

  test('the hold covers the whole file: 10 seconds (0.10) is refused with 402 on a budget of 0.05, and the backend never hears of it', async () => {
    const broke = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: brokeKey, maxRetries: 0 });
    const sent = fake.requests.length;
    await assert.rejects(
      broke.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(10), 'a.wav', { type: 'audio/wav' }) }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 402,
    );
    assert.equal(fake.requests.length, sent);
    // 4 seconds (0.04) fits.
    const fits = await broke.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav(4), 'a.wav', { type: 'audio/wav' }) });
    assert.equal((fits.usage as unknown as Priced).cost, 0.04);
  });

  test('a rate limit counts transcriptions: the second in the minute is 429 with Retry-After', async () => {
    const limited = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: limitedKey, maxRetries: 0 });
    const file = await toFile(wav(1), 'a.wav', { type: 'audio/wav' });
    await limited.audio.transcriptions.create({ model: 'whisper', file });
    await assert.rejects(
      limited.audio.transcriptions.create({ model: 'whisper', file }),
      (error: unknown) => error instanceof OpenAI.RateLimitError && Number(error.headers?.get('retry-after')) > 0,
    );
  });

  test('a client that goes away while the backend transcribes: the backend request is aborted, nothing charged or left held', async () => {
    const goneAuth = { authorization: `Bearer ${goneKey}` };
    const abortedBefore = fake.abortedRequests;
    const sentBefore = fake.requests.length;
    fake.once({ delayMs: 60_000 });
    const abort = new AbortController();
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('file', new Blob([wav(2)], { type: 'audio/wav' }), 'a.wav');
    const answered = fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: goneAuth, body: form, signal: abort.signal });
    await eventually(() => fake.requests.length > sentBefore, 'the backend got the audio');
    abort.abort();
    await assert.rejects(answered);
    await eventually(() => fake.abortedRequests > abortedBefore, 'the backend saw its request cut off');
    const record: any = await eventually(async () => (await gw.get('/v1/usage?limit=1', goneAuth)).body.data?.[0], 'the usage record');
    assert.equal(record.status, 499);
    assert.equal(record.cost, 0);
    const me = await eventually(async () => {
      const now = (await gw.get('/v1/me', goneAuth)).body;
      return now.reserved === 0 && now;
    }, 'nothing left held');
    assert.equal(me.spent, 0);
  });

  test('a client that goes away mid-upload: nothing is forwarded or held, and the gateway serves on', async () => {
    const goneAuth = { authorization: `Bearer ${goneKey}` };
    const sentBefore = fake.requests.length;
    await new Promise<void>((resolve) => {
      const url = new URL(`${gw.url}/v1/audio/transcriptions`);
      const boundary = 'cut-off-boundary';
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...goneAuth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      req.on('error', () => resolve());
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${boundary}\r\n`);
      req.write('Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n');
      req.write(wav(1).subarray(0, 1000), () => {
        req.destroy();
        resolve();
      });
    });
    const after = await client.audio.transcriptions.create({
      model: 'whisper',
      file: await toFile(wav(1), 'a.wav', { type: 'audio/wav' }),
    });
    assert.equal(after.text, 'Hello from the fake backend');
    assert.equal(fake.requests.length, sentBefore + 1, 'only the whole upload was forwarded');
    assert.equal((await gw.get('/v1/me', goneAuth)).body.reserved, 0);
  });

  test('a file whose duration cannot be read is refused on a priced router, and passed on to a free one', async () => {
    const noise = await toFile(Buffer.from('not audio at all, just some bytes'), 'a.wav', { type: 'audio/wav' });
    await assert.rejects(
      client.audio.transcriptions.create({ model: 'whisper', file: noise }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError && error.message.includes('duration could not be read') && error.param === 'file',
    );
    const free = await client.audio.transcriptions.create({ model: 'whisper-free', file: noise });
    assert.equal(free.text, 'Hello from the fake backend');
    assert.equal((free.usage as unknown as Priced).cost, 0);
  });

  test('a form without a file, with a second file, or asking for a stream is a clear 400', async () => {
    const post = (form: FormData) => fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
    const noFile = new FormData();
    noFile.append('model', 'whisper');
    const missing = await post(noFile);
    assert.equal(missing.status, 400);
    assert.match(((await missing.json()) as ErrorBody).error.message, /file: must be an audio file/);

    const twoFiles = new FormData();
    twoFiles.append('model', 'whisper');
    twoFiles.append('file', new Blob([wav(1)]), 'a.wav');
    twoFiles.append('file', new Blob([wav(1)]), 'b.wav');
    const two = await post(twoFiles);
    assert.equal(two.status, 400);
    assert.match(((await two.json()) as ErrorBody).error.message, /one file/);

    const streamed = new FormData();
    streamed.append('model', 'whisper');
    streamed.append('stream', 'true');
    streamed.append('file', new Blob([wav(1)]), 'a.wav');
    const stream = await post(streamed);
    assert.equal(stream.status, 400);
    assert.match(((await stream.json()) as ErrorBody).error.message, /stream: streamed transcriptions are not served/);

    const polluting = new FormData();
    polluting.append('model', 'whisper');
    polluting.append('__proto__', 'x');
    polluting.append('__proto__', 'y');
    polluting.append('file', new Blob([wav(1)]), 'a.wav');
    const refused = await post(polluting);
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as ErrorBody).error.message, 'A form field may not be named __proto__');
  });

  test('a multipart body on a JSON endpoint is 415', async () => {
    const form = new FormData();
    form.append('model', 'chat');
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: auth, body: form });
    assert.equal(response.status, 415);
  });

  test('a file declared larger than the limit is refused with 413 before it is read', async () => {
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('file', new Blob([Buffer.alloc(MAX_AUDIO_BYTES * 8)]), 'big.wav');
    const response = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as ErrorBody).error.code, 'request_too_large');
  });

  test('an upload sent in chunks without a length is refused with 413 once it passes the limit, while the client is still sending', async () => {
    const boundary = 'tollgate-test-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
    const sent = fake.requests.length;
    const { status, body, bytesSent } = await new Promise<{ status: number; body: string; bytesSent: number }>((resolve, reject) => {
      const url = new URL(`${gw.url}/v1/audio/transcriptions`);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: text, bytesSent }));
        },
      );
      req.on('error', reject);
      let bytesSent = 0;
      req.write(head);
      // The upload goes on (64 KiB at a time, each when the last is taken) until the answer comes: up to 16 times the limit.
      const piece = Buffer.alloc(64 * 1024);
      const more = () => {
        if (req.destroyed || bytesSent > MAX_AUDIO_BYTES * 16) return;
        bytesSent += piece.length;
        if (req.write(piece)) setImmediate(more);
        else req.once('drain', more);
      };
      req.once('response', () => {
        bytesSent = Number.POSITIVE_INFINITY;
      });
      more();
    });
    assert.equal(status, 413);
    assert.equal(JSON.parse(body).error.message, `The audio file is larger than the limit of ${MAX_AUDIO_BYTES} bytes`);
    assert.ok(Number.isFinite(bytesSent) || bytesSent === Number.POSITIVE_INFINITY);
    assert.equal(fake.requests.length, sent, 'nothing was forwarded');
  });
});

// Transcription forms that are broken on purpose: each gets a clear 400 in OpenAI's envelope as
// soon as the client has finished sending, nothing reaches the backend, nothing stays held, and
// the gateway goes on serving. (A file part that never closed once took the whole process down.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { wav } from '../../support/wav.ts';
import { HANG_MS } from '../../support/patience.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const key = generateKey().secret;
const auth = { authorization: `Bearer ${key}` };
let fake: FakeBackend;
let gw: TestGateway;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [{ id: 'dev', name: 'Dev', budget: '1000', keys: [{ name: 'k', key: '${KEY}' }] }],
      models: [
        {
          id: 'whisper',
          type: 'automatic-speech-recognition',
          costs: { audio_minutes: 0.6 },
          providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
      ],
    },
    { env: { KEY: key, FAKE: fake.url } },
  );
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

interface Answer {
  status: number;
  body: string;
}

/**
 * Writes a whole HTTP request on a socket of its own (the head, then the body pieces in order)
 * and reads the answer until the server closes or the answer's body is complete.
 */
function rawPost(head: Record<string, string>, pieces: readonly (string | Buffer)[]): Promise<Answer> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      resolve({ status: Number(text.slice(0, end).split(' ')[1]), body: text.slice(end + 4) });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
      const end = text.indexOf('\r\n\r\n');
      if (length && end >= 0 && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])) {
        socket.destroy();
        finish();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => (chunks.length > 0 ? finish() : reject(new Error('the connection closed with no answer'))));
    const lines = Object.entries({ ...auth, host: `${hostname}:${port}`, ...head }).map(([name, value]) => `${name}: ${value}`);
    socket.write(`POST /v1/audio/transcriptions HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    for (const piece of pieces) socket.write(piece);
  });
}

const BOUNDARY = 'hostile-boundary';
const MODEL_PART = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n`;
const FILE_HEAD = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`;

/** A chunked body's encoding: each piece as one chunk, then the last (empty) chunk. */
function chunked(pieces: readonly (string | Buffer)[]): Buffer[] {
  const out: Buffer[] = [];
  for (const piece of pieces) {
    const bytes = Buffer.from(piece);
    out.push(Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n'));
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return out;
}

async function assertServesOn(): Promise<void> {
  const form = new FormData();
  form.append('model', 'whisper');
  form.append('file', new Blob([wav(1)]), 'a.wav');
  const response = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
  assert.equal(response.status, 200, 'the gateway still serves a good form');
  assert.equal(((await response.json()) as { text: string }).text, 'Hello from the fake backend');
}

const REQUEST_BOUND = { timeout: HANG_MS };

describe('a broken transcription form', () => {
  test('a file part that never closes (183 bytes, its length declared) is a 400, and the gateway lives on', REQUEST_BOUND, async () => {
    const body = `${MODEL_PART}${FILE_HEAD}RIFFxxxx`;
    const sent = fake.requests.length;
    const answer = await rawPost({ 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(body.length) }, [
      body,
    ]);
    assert.equal(answer.status, 400);
    const error = JSON.parse(answer.body).error;
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /^The multipart form cannot be read: /);
    assert.equal(fake.requests.length, sent, 'nothing was forwarded');
    await assertServesOn();
  });

  test('a chunked form that ends in the middle of its file is answered 400 at once', REQUEST_BOUND, async () => {
    const answer = await rawPost(
      { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'transfer-encoding': 'chunked' },
      chunked([MODEL_PART, FILE_HEAD, wav(1).subarray(0, 2000)]),
    );
    assert.equal(answer.status, 400);
    assert.match(JSON.parse(answer.body).error.message, /^The multipart form cannot be read: /);
    await assertServesOn();
  });

  test('a form whose boundary is not the one its header names is answered 400', REQUEST_BOUND, async () => {
    const other = `--other-boundary\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--other-boundary--\r\n`;
    const answer = await rawPost({ 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(other.length) }, [
      other,
    ]);
    assert.equal(answer.status, 400);
    assert.match(JSON.parse(answer.body).error.message, /^The multipart form cannot be read: /);
    await assertServesOn();
  });

  test('the same, chunked', REQUEST_BOUND, async () => {
    const answer = await rawPost(
      { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'transfer-encoding': 'chunked' },
      chunked([`--other\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`, wav(1)]),
    );
    assert.equal(answer.status, 400);
    await assertServesOn();
  });
});

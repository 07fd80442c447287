// Audio files made to mislead or to stall the gateway: a 242-byte FLAC whose header claims 55,555
// hours (or 555) is not believed, on a priced router (400, nothing held or charged) or a free one
// (passed on with no duration, and the simulator's transcript stays short); and the duration of
// a 25 MB VBR MP3 without a Xing header, found by reading every frame, is read off the event loop:
// the gateway answers other requests the while.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { parseBuffer } from 'music-metadata';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend, FormFile } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { flacClaiming, vbrMp3 } from '../../support/audio.ts';
import { wav } from '../../support/wav.ts';
import { testBed } from '../../support/test-bed.ts';
import { HANG_MS } from '../../support/patience.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const key = generateKey().secret;
const auth = { authorization: `Bearer ${key}` };
const HOURS_55555 = 55_555 * 3600;
const HOURS_555 = 555 * 3600;
let fake: FakeBackend;
let gw: TestGateway;

const config: GatewayConfig = {
  users: [{ id: 'dev', name: 'Dev', budget: '100000', keys: [{ name: 'k', key: '${KEY}' }] }],
  models: [
    {
      id: 'whisper',
      type: 'automatic-speech-recognition',
      costs: { audio_minutes: 0.6 },
      providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
    },
    {
      id: 'whisper-free',
      type: 'automatic-speech-recognition',
      providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
    },
    { id: 'sim', type: 'automatic-speech-recognition', costs: { audio_minutes: 0.6 }, providers: [{ model: 'sim', type: 'simulator' }] },
    { id: 'sim-free', type: 'automatic-speech-recognition', providers: [{ model: 'sim', type: 'simulator' }] },
  ],
};

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway(config, { env: { KEY: key, FAKE: fake.url } });
});

after(async () => {
  await gw?.close();
  await fake?.close();
});

function transcribe(url: string, model: string, file: Buffer, name: string, type: string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append('model', model);
  for (const [field, value] of Object.entries(extra)) form.append(field, value);
  form.append('file', new Blob([file], { type }), name);
  return fetch(`${url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
}

const spent = async () => (await gw.get('/v1/me', auth)).body as { spent: number; reserved: number };

describe('a duration the file cannot hold is not believed', () => {
  test('the forgeries are real: music-metadata reads 55,555 and 555 hours from 242 bytes', async () => {
    for (const [seconds, rate] of [
      [HOURS_55555, 10],
      [HOURS_555, 1000],
    ] as const) {
      const file = flacClaiming(seconds, rate);
      assert.equal(file.length, 242);
      const { format } = await parseBuffer(file, { mimeType: 'audio/flac', size: file.length }, { duration: true });
      assert.equal(format.duration, seconds);
    }
  });

  test('on a priced router: 400 naming what the header claims and what 242 bytes can hold; nothing sent, held or charged', async () => {
    const before = await spent();
    const sent = fake.requests.length;
    for (const [model, seconds, rate] of [
      ['whisper', HOURS_555, 1000],
      ['whisper', HOURS_55555, 10],
      ['sim', HOURS_555, 1000],
    ] as const) {
      const response = await transcribe(gw.url, model, flacClaiming(seconds, rate), 'a.flac', 'audio/flac');
      const answer = (await response.json()) as { error: { message: string; code: string; param: string } };
      assert.equal(response.status, 400, `${model}, ${seconds} s: ${JSON.stringify(answer)}`);
      const { error } = answer;
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.param, 'file');
      assert.match(error.message, /duration could not be read/);
      assert.ok(error.message.includes(`claims ${seconds} s`), error.message);
      assert.match(error.message, /242 bytes can hold at most 2\.42 s \(100 bytes a second/);
    }
    assert.equal(fake.requests.length, sent, 'the backend never heard of them');
    const now = await spent();
    assert.equal(now.spent, before.spent);
    assert.equal(now.reserved, 0);
  });

  test('on a free router: passed on as it came, with no duration (an unreadable file), and nothing charged', async () => {
    const file = flacClaiming(HOURS_555, 1000);
    const response = await transcribe(gw.url, 'whisper-free', file, 'a.flac', 'audio/flac');
    assert.equal(response.status, 200);
    const body = (await response.json()) as { text: string; usage: { cost: number } };
    assert.equal(body.text, 'Hello from the fake backend');
    assert.equal(body.usage.cost, 0);
    assert.deepEqual((fake.requests.at(-1)!.body.file as FormFile).bytes, file);
  });

  // Bounded only as a test that could hang is: the simulator must not wait out the claimed hours.
  test('the simulator, sent the 55,555-hour file on a free router, answers with a short transcript', {
    timeout: HANG_MS,
  }, async () => {
    const response = await transcribe(gw.url, 'sim-free', flacClaiming(HOURS_55555, 10), 'a.flac', 'audio/flac', {
      response_format: 'verbose_json',
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { text: string; duration: number };
    assert.equal(body.duration, 0, 'no duration was believed');
    assert.ok(body.text.split(' ').length < 10);
  });

  test('an honest file of the same kind is believed: 2 seconds of WAV, 0.02 on the priced router', async () => {
    const response = await transcribe(gw.url, 'sim', wav(2), 'a.wav', 'audio/wav');
    assert.equal(response.status, 200);
    const body = (await response.json()) as { usage: { seconds: number; cost: number } };
    assert.equal(body.usage.seconds, 2);
    assert.equal(body.usage.cost, 0.02);
  });
});

describe('the duration is read off the event loop', () => {
  test('a 25 MB VBR MP3 without a Xing header: its whole length is charged, and /healthz is answered while it is read', async () => {
    // About 70 minutes in 178,000 frames: reading them all took 0.9 s of a 2-core machine's CPU.
    const mp3 = vbrMp3(25_000_000);
    const before = await spent();
    // /healthz asked again and again, one at a time, from before the upload to after its answer.
    // With the scan on the event loop, none was answered between the upload's end and its answer
    // but the one waiting out the scan (and a couple at the end); the scan in a worker, hundreds.
    let done = false;
    const answered: number[] = [];
    const pinging = (async () => {
      while (!done) {
        const health = await fetch(`${gw.url}/healthz`);
        await health.text();
        answered.push(performance.now());
      }
    })();
    const { status, body, uploaded, answeredAt } = await upload(gw.url, 'sim', mp3.bytes, 'talk.mp3', 'audio/mpeg', 'verbose_json');
    done = true;
    await pinging;
    assert.equal(status, 200, JSON.stringify(body));
    // music-metadata counts one frame fewer than the file holds (24 ms): within a tenth of a second.
    assert.ok(Math.abs(body.duration - mp3.seconds) < 0.1, `${body.duration} s, the file holds ${mp3.seconds} s`);
    assert.ok(Math.abs(body.usage.cost - (body.usage.seconds / 60) * 0.6) < 1e-6);
    assert.ok(body.usage.cost > 41.6);
    const whileRead = answered.filter((at) => at > uploaded && at < answeredAt).length;
    assert.ok(
      whileRead >= 10,
      `${whileRead} /healthz answered in the ${Math.round(answeredAt - uploaded)} ms between the upload and its answer`,
    );
    const now = await spent();
    assert.ok(Math.abs(now.spent - before.spent - body.usage.cost) < 1e-6);
  });
});

/**
 * A transcription's form written by hand, the file in 1 MB writes as the socket takes them (so the
 * test's own client does not copy 25 MB on the event loop it shares with the gateway): when the
 * last byte was handed to the socket, when the answer came, and the answer.
 */
function upload(url: string, model: string, file: Buffer, name: string, type: string, format: string) {
  const boundary = 'tollgate-hostile-audio';
  const field = (key: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    `${field('model', model)}${field('response_format', format)}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise<{ status: number; body: any; uploaded: number; answeredAt: number }>((resolve, reject) => {
    let uploaded = Number.POSITIVE_INFINITY;
    const target = new URL(`${url}/v1/audio/transcriptions`);
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          ...auth,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + file.length + tail.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()), uploaded, answeredAt: performance.now() }),
        );
      },
    );
    req.on('error', reject);
    req.write(head);
    let at = 0;
    const more = () => {
      while (at < file.length) {
        const piece = file.subarray(at, at + 1024 * 1024);
        at += piece.length;
        if (!req.write(piece)) return void req.once('drain', more);
      }
      req.end(tail, () => {
        uploaded = performance.now();
      });
    };
    more();
  });
}

describe('the compiled gateway (npm run build) scans audio in its compiled worker', () => {
  let compiled: GatewayProcess;

  before(async () => {
    compiled = await bed.process(config, { env: { KEY: key, FAKE: fake.url }, compiled: true });
  });

  after(async () => {
    await compiled?.stop();
  });

  test('a 3-second WAV is charged 3 seconds, and a forged FLAC refused, as from the sources', async () => {
    const honest = await transcribe(compiled.url, 'sim', wav(3), 'a.wav', 'audio/wav');
    assert.equal(honest.status, 200);
    assert.equal(((await honest.json()) as { usage: { seconds: number } }).usage.seconds, 3);
    const forged = await transcribe(compiled.url, 'sim', flacClaiming(HOURS_555, 1000), 'a.flac', 'audio/flac');
    assert.equal(forged.status, 400);
    assert.match(((await forged.json()) as { error: { message: string } }).error.message, /claims 1998000 s/);
    assert.ok(!compiled.output.some((line) => /"level":(50|60)/.test(line)), compiled.output.join('\n'));
  });
});

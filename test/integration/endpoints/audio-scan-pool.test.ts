// Issue 46, finding 10: the threads that read uploads' durations are a pool the callers share
// fairly. A caller who cannot pay for the least transcription is refused 402 before any scan;
// a caller with a scan under way gets 429 for the next while another caller's file is read; and
// two callers' files are read at the same time. The gateway's scan threads are
// test/support/held-probe-worker.ts: a file of type audio/x-hold is held until the test lets it go.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { HELD_PROBE_WORKER, heldScans, type HeldScans } from '../../support/held-scans.ts';
import { wav } from '../../support/wav.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const ann = generateKey().secret;
const bob = generateKey().secret;
const broke = generateKey().secret;
const exhausted = generateKey().secret;
let fake: FakeBackend;
let gw: TestGateway;
let held: HeldScans;

before(async () => {
  held = heldScans();
  fake = await startFakeOpenAI();
  gw = await bed.gateway(
    {
      users: [
        { id: 'ann', name: 'Ann', budget: '1000', keys: [{ name: 'k', key: '${ANN}' }] },
        { id: 'bob', name: 'Bob', budget: '1000', keys: [{ name: 'k', key: '${BOB}' }] },
        // Less than a transcript window (448 tokens) at 10 per million tokens: 0.00448.
        { id: 'broke', name: 'Broke', budget: '0.001', keys: [{ name: 'k', key: '${BROKE}' }] },
        { id: 'exhausted', name: 'Exhausted', budget: '0', keys: [{ name: 'k', key: '${EXHAUSTED}' }] },
      ],
      models: [
        {
          id: 'whisper',
          type: 'automatic-speech-recognition',
          costs: { audio_minutes: 0.6, completion_tokens: 10 },
          providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
        {
          id: 'whisper-minutes',
          type: 'automatic-speech-recognition',
          costs: { audio_minutes: 0.6 },
          providers: [{ model: 'openai/whisper-large-v3', type: 'vllm', args: { api_url: '${FAKE}' } }],
        },
      ],
    },
    {
      env: { ANN: ann, BOB: bob, BROKE: broke, EXHAUSTED: exhausted, FAKE: fake.url },
      settings: { audioScanWorkers: 2, audioScansPerCaller: 1 },
      audioScanWorker: HELD_PROBE_WORKER,
    },
  );
});

after(async () => {
  held?.release();
  await gw?.close();
  await fake?.close();
  held?.close();
});

/** A transcription of `file` (sent as `type`) by the holder of `key`: its status and error, if any. */
async function transcribe(
  key: string,
  type: string,
  model = 'whisper',
): Promise<{ status: number; error?: { code: string; param: string | null; message: string }; headers: Headers }> {
  const form = new FormData();
  form.append('model', model);
  form.append('file', new Blob([wav(1)], { type }), 'a.wav');
  const response = await fetch(`${gw.url}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = (await response.json()) as { error?: { code: string; param: string | null; message: string } };
  return { status: response.status, error: body.error, headers: response.headers };
}

/** Every scan the gateway's pool ended, by outcome (tollgate_audio_scans_total). */
async function scansEnded(): Promise<number> {
  const text = (await gw.get('/metrics')).body as string;
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith('tollgate_audio_scans_total{')) total += Number(line.split(' ').at(-1));
  return total;
}

describe('the audio scan pool', () => {
  test('a caller who cannot pay for the least transcription is refused 402 before any scan', async () => {
    const before = await scansEnded();
    for (const [key, model] of [
      [broke, 'whisper'],
      [exhausted, 'whisper-minutes'],
    ] as const) {
      // audio/x-hold: a scan of it would hold its thread until released, and this answer with it.
      const refused = await transcribe(key, 'audio/x-hold', model);
      assert.equal(refused.status, 402, JSON.stringify(refused.error));
      assert.equal(refused.error?.code, 'insufficient_budget');
    }
    assert.equal(await scansEnded(), before, 'the pool saw neither file');
    const counted = await transcribe(ann, 'audio/wav');
    assert.equal(counted.status, 200);
    assert.equal(await scansEnded(), before + 1, 'a scan is counted');
  });

  test("a caller past their scans in flight gets 429, while another caller's transcription is read and served", async () => {
    const first = transcribe(ann, 'audio/x-hold');
    await held.held(1);
    const second = await transcribe(ann, 'audio/wav');
    assert.equal(second.status, 429, JSON.stringify(second.error));
    assert.equal(second.error?.code, 'rate_limit_exceeded');
    assert.equal(second.error?.param, 'file');
    assert.match(second.error?.message ?? '', /already have 1 audio file being read/);
    assert.equal(second.headers.get('retry-after'), '1');
    const other = await transcribe(bob, 'audio/wav');
    assert.equal(other.status, 200, JSON.stringify(other.error));
    held.release();
    assert.equal((await first).status, 200);
    const again = await transcribe(ann, 'audio/wav');
    assert.equal(again.status, 200, 'the bound counts scans in flight only');
  });

  test("two callers' files are read at the same time, each by a thread of its own", async () => {
    const annFile = transcribe(ann, 'audio/x-hold');
    const bobFile = transcribe(bob, 'audio/x-hold');
    await held.held(2);
    held.release();
    assert.deepEqual([(await annFile).status, (await bobFile).status], [200, 200]);
  });
});

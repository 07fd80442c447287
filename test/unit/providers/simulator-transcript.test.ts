// The simulator's transcript is bounded like its chat answers (SIMULATOR_LIMITS): at most
// completionTokens words, whatever length the audio's header gives (2.5 words a second).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderSpecOf } from '../../../core/resources/provider.ts';
import type { UpstreamHttp } from '../../../gateway/providers/upstream-http.ts';
import type { AudioFile } from '../../../gateway/endpoints/audio-file.ts';
import { SIMULATOR_LIMITS, simulator } from '../../../gateway/providers/simulator.ts';

const provider = { simulator: { latency_ms: 0, tokens_per_second: 0, completion_tokens: 32 } } as ProviderSpecOf<'simulator'>;

async function transcript(seconds: number, format = 'json') {
  const file: AudioFile = { bytes: Buffer.from('audio'), filename: 'a.wav', mimeType: 'audio/wav', seconds };
  const request = {
    endpoint: 'transcriptions',
    body: { model: 'sim', file: file as never, response_format: format },
    stream: false,
    signal: new AbortController().signal,
    timeouts: { connectMs: 1000, firstByteMs: 1000, betweenChunksMs: 1000 },
  } as const;
  const result = await simulator.forward(provider, request, {} as UpstreamHttp);
  assert.equal(result.kind, 'body');
  return (result as unknown as { body: { text: string; duration?: number; usage?: { seconds: number } } }).body;
}

test('4 seconds: 10 words, and 4 seconds of usage', async () => {
  const body = await transcript(4);
  assert.equal(body.text.split(' ').length, 10);
  assert.equal(body.usage?.seconds, 4);
});

test('a million seconds: at most completionTokens words (not 2.5 million), the duration as given', async () => {
  const body = await transcript(1_000_000, 'verbose_json');
  assert.equal(body.text.split(' ').length, SIMULATOR_LIMITS.completionTokens);
  assert.equal(body.duration, 1_000_000);
});

// An upload's duration is believed only as far as its size can hold it (audio-file.ts): at least
// 100 bytes a second of audio. A 242-byte FLAC whose STREAMINFO claims 55,555 hours has no
// duration, and says why; honest files, low-bitrate speech included, keep theirs.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { AudioUpload, implausibleDuration, MIN_AUDIO_BYTES_PER_SECOND, readAudioFile } from '../../../gateway/endpoints/audio-file.ts';
import { AudioProbe } from '../../../gateway/endpoints/audio-probe.ts';
import { flacClaiming, vbrMp3 } from '../../support/audio.ts';
import { wav } from '../../support/wav.ts';

const probe = new AudioProbe();
after(() => probe.close());
const read = (bytes: Buffer, filename: string, mimeType: string) => readAudioFile(new AudioUpload(bytes, filename, mimeType, false), probe);

test('the floor is 100 bytes a second: up to size / 100 seconds is believed, more is not', () => {
  assert.equal(MIN_AUDIO_BYTES_PER_SECOND, 100);
  assert.equal(implausibleDuration(2.42, 242), undefined);
  assert.equal(implausibleDuration(0, 0), undefined);
  assert.equal(
    implausibleDuration(2.43, 242),
    'its header claims 2.43 s of audio, but its 242 bytes can hold at most 2.42 s (100 bytes a second, less than any speech codec makes)',
  );
  assert.match(implausibleDuration(55_555 * 3600, 242)!, /^its header claims 199998000 s \(55555 h\) of audio, but its 242 bytes/);
});

test('the 242-byte FLAC that claims 55,555 hours (or 555) has no duration, and the reason names both lengths', async () => {
  for (const [seconds, rate] of [
    [55_555 * 3600, 10],
    [555 * 3600, 1000],
  ] as const) {
    const forged = flacClaiming(seconds, rate);
    const file = await read(forged, 'a.flac', 'audio/flac');
    assert.equal(file.seconds, undefined);
    assert.ok(file.unreadable?.startsWith(`its header claims ${seconds} s (${seconds / 3600} h) of audio`), file.unreadable);
    assert.match(file.unreadable!, /242 bytes can hold at most 2\.42 s/);
    assert.deepEqual(file.bytes, flacClaiming(seconds, rate));
    assert.equal(file.filename, 'a.flac');
    assert.equal(file.mimeType, 'audio/flac');
  }
});

test('honest files keep their duration: a WAV, and 32 to 64 kbit/s VBR speech without a Xing header', async () => {
  const two = await read(wav(2, 8000), 'a.wav', 'audio/wav');
  assert.equal(two.seconds, 2);
  assert.equal(two.unreadable, undefined);
  const mp3 = vbrMp3(500_000);
  const speech = await read(mp3.bytes, 'a.mp3', 'audio/mpeg');
  assert.ok(Math.abs(speech.seconds! - mp3.seconds) < 0.1, `${speech.seconds}`);
});

test('a file that is not audio has no duration and no more to say', async () => {
  const file = await read(Buffer.from('not audio at all, just some bytes'), 'a.wav', 'audio/wav');
  assert.equal(file.seconds, undefined);
  assert.equal(file.unreadable, undefined);
  assert.equal(file.bytes.toString(), 'not audio at all, just some bytes');
});

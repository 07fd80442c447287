// The worker threads that read uploads' durations (gateway/endpoints/audio-probe.ts): the bytes
// go there transferred (or copied) and come back usable, one scan a thread at a time, never
// copied there; a scan past its time is stopped and a worker that dies is replaced, the bytes
// they held lost (the upload is refused); a worker that cannot load takes none; an idle worker
// does not keep the process alive; a scan's wait for a thread is bounded, and so are one
// caller's scans in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AudioProbe, ScansBusyError, TooManyScansError } from '../../../gateway/endpoints/audio-probe.ts';
import { HELD_PROBE_WORKER, heldScans } from '../../support/held-scans.ts';
import { flacClaiming, syncStorm, vbrMp3 } from '../../support/audio.ts';
import { wav } from '../../support/wav.ts';

const CRASHING_WORKER = new URL('../../support/crashing-probe-worker.ts', import.meta.url);

test('a WAV that owns its memory goes to the worker transferred (not copied) and comes back whole', async (t) => {
  const probe = new AudioProbe();
  t.after(() => probe.close());
  const sent = wav(3);
  assert.equal(sent.byteLength, sent.buffer.byteLength, 'the Buffer owns its ArrayBuffer');
  const probed = await probe.scan(sent, 'audio/wav');
  assert.equal(probed.seconds, 3);
  assert.equal(sent.buffer.byteLength, 0, 'its ArrayBuffer was transferred: nothing was copied on the event loop');
  assert.deepEqual(probed.bytes, wav(3));
});

test('a Buffer that is a view of a larger one (a pooled slice) is copied, and stays as it was', async (t) => {
  const probe = new AudioProbe();
  t.after(() => probe.close());
  const whole = Buffer.concat([Buffer.from('prefix'), wav(1), Buffer.from('suffix')]);
  const view = whole.subarray(6, whole.length - 6);
  const probed = await probe.scan(view, 'audio/wav');
  assert.equal(probed.seconds, 1);
  assert.equal(probed.bytes, view, 'the same Buffer');
  assert.deepEqual(view, wav(1));
  const small = Buffer.from('not audio, and from the pool');
  const unread = await probe.scan(small, 'audio/wav');
  assert.equal(unread.seconds, undefined);
  assert.equal(unread.bytes?.toString(), 'not audio, and from the pool');
});

test('the header is read as music-metadata reads it (the FLAC forgery claims 55,555 hours: audio-file.ts judges it)', async (t) => {
  const probe = new AudioProbe();
  t.after(() => probe.close());
  const probed = await probe.scan(flacClaiming(55_555 * 3600, 10), 'audio/flac');
  assert.equal(probed.seconds, 55_555 * 3600);
  assert.equal(probed.bytes?.length, 242);
});

test('scans wait their turn: files sent together are all read, each with its own bytes back', async (t) => {
  const probe = new AudioProbe();
  t.after(() => probe.close());
  const mp3 = vbrMp3(200_000);
  const results = await Promise.all([
    probe.scan(wav(1), 'audio/wav'),
    probe.scan(mp3.bytes, 'audio/mpeg'),
    probe.scan(wav(2), 'audio/wav'),
  ]);
  assert.deepEqual(
    results.map((r) => r.seconds),
    [1, results[1]!.seconds, 2],
  );
  assert.ok(Math.abs(results[1]!.seconds! - mp3.seconds) < 0.1);
  assert.deepEqual(results[0]!.bytes, wav(1));
  assert.deepEqual(results[1]!.bytes, vbrMp3(200_000).bytes);
  assert.deepEqual(results[2]!.bytes, wav(2));
});

test('a scan past its time is stopped: the file is unread, its bytes gone with the worker, and the next file is read by a new worker', async (t) => {
  const probe = new AudioProbe({ timeoutMs: 300 });
  t.after(() => probe.close());
  // The worker loaded first, so the deadline is the scan's own (loading takes seconds on a busy machine).
  await probe.warm();
  // 2 MB of 0xFF: music-metadata tries an MPEG frame at every byte, for about 8 seconds.
  const probed = await probe.scan(syncStorm(2_000_000), 'audio/mpeg');
  assert.equal(probed.seconds, undefined);
  assert.equal(probed.unreadable, 'reading it took more than 0.3 s');
  // Not assert.equal: a failure would carry 2 MB into the test runner's report.
  assert.ok(probed.bytes === undefined, 'the worker held them: the upload cannot be forwarded');
  await probe.warm();
  assert.equal((await probe.scan(wav(2), 'audio/wav')).seconds, 2);
});

test('a worker that dies is replaced: its file is unread (its bytes gone with it), the next is read', async (t) => {
  const probe = new AudioProbe({ workerUrl: CRASHING_WORKER });
  t.after(() => probe.close());
  // A Buffer that owns its memory (not a view): it goes to the worker, not a copy of it.
  const crashed = await probe.scan(Buffer.from(new Uint8Array(wav(1)).buffer), 'audio/x-crash');
  assert.equal(crashed.seconds, undefined);
  assert.equal(crashed.unreadable, 'its scan stopped');
  assert.equal(crashed.bytes, undefined);
  assert.equal((await probe.scan(wav(1), 'audio/wav')).seconds, 42, 'a new worker read it');
});

test('a worker that cannot load takes no bytes with it: the file is unread', async (t) => {
  const probe = new AudioProbe({ workerUrl: new URL('./no-such-worker.ts', import.meta.url) });
  t.after(() => probe.close());
  const probed = await probe.scan(wav(1), 'audio/wav');
  assert.equal(probed.seconds, undefined);
  assert.match(probed.unreadable ?? '', /^its scan failed/);
  assert.deepEqual(probed.bytes, wav(1));
});

test('close waits for the scan under way, and a later scan starts another worker', async () => {
  const probe = new AudioProbe();
  const scanning = probe.scan(wav(2), 'audio/wav');
  await probe.close();
  assert.equal((await scanning).seconds, 2);
  assert.equal((await probe.scan(wav(1), 'audio/wav')).seconds, 1);
  await probe.close();
});

test('the idle workers do not keep the process alive: a script that reads one file and never closes exits', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-probe-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const script = join(dir, 'read-one.ts');
  await writeFile(
    script,
    `import { AudioProbe } from ${JSON.stringify(fileURLToPath(new URL('../../../gateway/endpoints/audio-probe.ts', import.meta.url)))};
import { wav } from ${JSON.stringify(fileURLToPath(new URL('../../support/wav.ts', import.meta.url)))};
const probed = await new AudioProbe().scan(wav(2), 'audio/wav');
console.log(probed.seconds, probed.unreadable ?? '');
`,
  );
  const child = spawnSync(process.execPath, [script], { timeout: 20_000, encoding: 'utf8' });
  assert.equal(child.error, undefined, 'it exited by itself');
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), '2');
});

test('a scan that waits for a thread past its bound is refused (ScansBusyError), its file not blamed; the held scan is then read', async (t) => {
  const held = heldScans();
  const probe = new AudioProbe({ workers: 1, waitMs: 300, workerUrl: HELD_PROBE_WORKER });
  t.after(async () => {
    held.release();
    await probe.close();
    held.close();
  });
  // The thread loaded first: its loading (seconds on a busy machine) is not the wait tested.
  await probe.warm();
  const holding = probe.scan(wav(1), 'audio/x-hold');
  await held.held(1);
  await assert.rejects(probe.scan(wav(2), 'audio/wav'), (error) => error instanceof ScansBusyError && error.waitedMs === 300);
  held.release();
  assert.equal((await holding).seconds, 42);
  assert.deepEqual((await holding).bytes, wav(1));
});

test('one caller has at most perCaller scans waiting or under way; others are not bound by theirs', async (t) => {
  const held = heldScans();
  const outcomes: string[] = [];
  const probe = new AudioProbe({ workers: 2, perCaller: 1, workerUrl: HELD_PROBE_WORKER, observe: (outcome) => outcomes.push(outcome) });
  t.after(async () => {
    held.release();
    await probe.close();
    held.close();
  });
  const annHeld = probe.scan(wav(1), 'audio/x-hold', { caller: 'ann' });
  await held.held(1);
  await assert.rejects(
    probe.scan(wav(1), 'audio/wav', { caller: 'ann' }),
    (error) => error instanceof TooManyScansError && error.limit === 1,
  );
  assert.equal((await probe.scan(wav(1), 'audio/wav', { caller: 'bob' })).seconds, 42);
  held.release();
  assert.equal((await annHeld).seconds, 42);
  assert.equal((await probe.scan(wav(1), 'audio/wav', { caller: 'ann' })).seconds, 42, 'her scan ended: she may scan again');
  assert.deepEqual(outcomes, ['caller_limit', 'read', 'read', 'read']);
});

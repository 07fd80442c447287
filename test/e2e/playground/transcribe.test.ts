// Transcribing in the Playground, in a real browser: a user picks the speech recognition model,
// chooses a WAV the test wrote, and reads the transcript with the seconds of audio charged and the
// cost; without a file the form says so next to the field; a budget too small for the audio is
// refused with the gateway's sentence.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { wav } from '../../support/wav.ts';
import { launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { goTo, signIn } from './steps.ts';

const bed = testBed();

const key = generateKey().secret;
const brokeKey = generateKey().secret;
let gw: TestGateway;
let browser: PlaygroundBrowser;
let user: OpenPage;

before(async () => {
  gw = await bed.gateway({
    users: [
      { id: 'ada', name: 'Ada', budget: '10', keys: [{ name: 'k', key: key }] },
      { id: 'bob', name: 'Bob', budget: '0.01', keys: [{ name: 'k', key: brokeKey }] },
    ],
    models: [
      {
        id: 'whisper',
        type: 'automatic-speech-recognition',
        costs: { audio_minutes: 0.6 },
        providers: [{ model: 'whisper-sim', type: 'simulator' }],
      },
      { id: 'chat', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
    ],
  });
  browser = await launchPlaygroundBrowser();
  user = await browser.open(gw.url);
  await signIn(user.page, key);
});

after(async () => {
  await browser?.close();
});

describe('the Transcribe page', () => {
  test('without a file, the form says so next to the field', async () => {
    const { page } = user;
    await goTo(page, 'Transcribe');
    await page.getByRole('button', { name: 'Transcribe' }).click();
    await page.getByText('Choose an audio file first.').waitFor();
    assert.equal(await page.getByLabel('Audio file', { exact: true }).getAttribute('aria-invalid'), 'true');
  });

  test('a 3-second WAV: its transcript, 3 s of audio charged, costing 0.03', async () => {
    const { page } = user;
    assert.deepEqual(await page.getByLabel('Model', { exact: true }).locator('option').allTextContents(), ['whisper']);
    await page.getByLabel('Audio file', { exact: true }).setInputFiles({ name: 'hello.wav', mimeType: 'audio/wav', buffer: wav(3) });
    await page.getByRole('button', { name: 'Transcribe' }).click();
    const usage = page.getByRole('definition').filter({ hasText: ' s' });
    await usage.waitFor();
    assert.equal(await usage.textContent(), '3 s');
    assert.match((await page.locator('.cost').textContent()) ?? '', /0\.03/);
    assert.ok(((await page.getByLabel('Transcript').locator('.text').textContent()) ?? '').length > 0);
    await screenshot(page, 'transcribe');
  });

  test('a budget too small for the audio gets the gateway’s refusal', async () => {
    const broke = await browser.open(gw.url);
    await signIn(broke.page, brokeKey);
    await goTo(broke.page, 'Transcribe');
    await broke.page.getByLabel('Audio file', { exact: true }).setInputFiles({ name: 'long.wav', mimeType: 'audio/wav', buffer: wav(5) });
    await broke.page.getByRole('button', { name: 'Transcribe' }).click();
    const alert = broke.page.getByRole('alert').filter({ hasText: /budget/i });
    await alert.waitFor();
  });
});

// An alert webhook without a signing secret is refused at start-up: its receiver could not tell
// Tollgate's alerts from anyone's. Unsigned alerts are sent only when asked for by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSettings, SettingsError } from '../../../gateway/config/settings.ts';

const URL = 'https://hooks.example.com/budget';
const SECRET = 'a-webhook-secret-of-some-length';

test('a webhook URL without a secret is refused, naming the secret and the opt-out', () => {
  assert.throws(
    () => readSettings({ alertWebhookUrl: URL }, {}),
    (error: Error) =>
      error instanceof SettingsError &&
      /--alert-webhook-secret/.test(error.message) &&
      /TOLLGATE_ALERT_WEBHOOK_SECRET/.test(error.message) &&
      /--alert-webhook-unsigned true/.test(error.message),
  );
  assert.throws(() => readSettings({}, { TOLLGATE_ALERT_WEBHOOK_URL: URL }), SettingsError);
  assert.throws(() => readSettings({ alertWebhookUrl: URL, alertWebhookUnsigned: false }, {}), SettingsError);
});

test('a webhook URL with a secret, or explicitly unsigned, is accepted', () => {
  const signed = readSettings({ alertWebhookUrl: URL }, { TOLLGATE_ALERT_WEBHOOK_SECRET: SECRET });
  assert.equal(signed.alertWebhookSecret, SECRET);
  const unsigned = readSettings({}, { TOLLGATE_ALERT_WEBHOOK_URL: URL, TOLLGATE_ALERT_WEBHOOK_UNSIGNED: 'true' });
  assert.equal(unsigned.alertWebhookUrl, URL);
  assert.equal(unsigned.alertWebhookSecret, undefined);
  assert.equal(unsigned.alertWebhookUnsigned, true);
  assert.equal(readSettings({ alertWebhookUrl: URL, alertWebhookUnsigned: true }, {}).alertWebhookUnsigned, true);
});

test('without a webhook no secret is needed, and the opt-out alone changes nothing', () => {
  assert.equal(readSettings({}, {}).alertWebhookUrl, undefined);
  assert.equal(readSettings({ alertWebhookUnsigned: true }, {}).alertWebhookUrl, undefined);
});

test('a secret with the opt-out is a contradiction, refused rather than guessed at', () => {
  assert.throws(
    () => readSettings({ alertWebhookUrl: URL, alertWebhookSecret: SECRET, alertWebhookUnsigned: true }, {}),
    (error: Error) => error instanceof SettingsError && /--alert-webhook-unsigned/.test(error.message),
  );
});

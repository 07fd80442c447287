// A provider's secrets: its base URL shown without credentials or secret query values, and the
// secrets a request carried masked in text that came back from the backend.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { maskUrl, requestSecrets, scrubSecrets } from '../../../gateway/providers/secrets.ts';

describe('maskUrl', () => {
  const cases: [string, string][] = [
    ['http://vllm-a:8000', 'http://vllm-a:8000'],
    ['https://api.openai.com/', 'https://api.openai.com/'],
    ['http://host:8000/prefix?version=2', 'http://host:8000/prefix?version=2'],
    ['https://user:secret@host', 'https://***@host'],
    ['https://user@host/base', 'https://***@host/base'],
    // Userinfo runs to the LAST @ before the host, as fetch reads it.
    ['http://user:p@ssw0rd@host', 'http://***@host'],
    ['http://user:p@ss@w0rd@host:9000/x', 'http://***@host:9000/x'],
    ['https://host/x?api_key=abc123', 'https://host/x?api_key=***'],
    ['https://host?key=abc&api-version=2024-02-01&sig=zz', 'https://host?key=***&api-version=2024-02-01&sig=***'],
    ['https://host/?access_token=t0k&Password=pw&client_secret=s', 'https://host/?access_token=***&Password=***&client_secret=***'],
    ['https://u:p@host/x?token=t#frag', 'https://***@host/x?token=***#frag'],
  ];
  for (const [given, shown] of cases) {
    test(`${given} is shown as ${shown}`, () => {
      assert.equal(maskUrl(given), shown);
    });
  }

  test('no part of the password is left whatever it holds', () => {
    for (const password of ['p@ss', 'a:b@c', '%40x', 'sec/ret']) {
      const url = `https://user:${encodeURIComponent(password)}@host/x`;
      const shown = maskUrl(url);
      assert.equal(shown, 'https://***@host/x');
    }
  });

  test('text that is not a URL is not shown at all', () => {
    assert.equal(maskUrl('not a url with a secret'), '***');
  });
});

describe('requestSecrets and scrubSecrets', () => {
  test('the key, as sent in Authorization and on its own, is masked', () => {
    const secrets = requestSecrets('http://host', { authorization: 'Bearer sk-live-123' });
    assert.equal(scrubSecrets('got Bearer sk-live-123; key sk-live-123', secrets), 'got Bearer ***; key ***');
  });

  test('the password of the base URL, as written and decoded, and secret query values are masked', () => {
    const secrets = requestSecrets('http://user:p%40ss@host/x?api_key=qk-9&v=1', undefined);
    assert.equal(scrubSecrets('p@ss p%40ss qk-9 v=1 user', secrets), '*** *** *** v=1 user');
  });

  test('a secret that holds another is masked whole', () => {
    const secrets = requestSecrets('http://host', { authorization: 'Bearer abc', 'x-extra': 'abcdef' });
    assert.equal(scrubSecrets('abcdef', secrets), '***');
  });

  test('a request without secrets leaves the text alone', () => {
    const secrets = requestSecrets('http://host', undefined);
    assert.deepEqual(secrets, []);
    assert.equal(scrubSecrets('nothing to hide', secrets), 'nothing to hide');
  });
});

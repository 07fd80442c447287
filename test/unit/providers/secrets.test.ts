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
    // The fragment is never sent, but may hold a token pasted with the URL: shown as there, not what.
    ['https://u:p@host/x?token=t#frag', 'https://***@host/x?token=***#***'],
    ['https://host/x#access_token=abc', 'https://host/x#***'],
    ['https://host#frag', 'https://host#***'],
    ['https://host/x?version=2#', 'https://host/x?version=2#'],
    // A secret-looking name is masked whatever the length of its value, even none.
    ['https://host/x?sig=a&token=&auth', 'https://host/x?sig=***&token=***&auth=***'],
    // Names of one or two characters say nothing of their value, so are taken for secrets.
    ['https://host/x?k=abc&pw=ab&t=1', 'https://host/x?k=***&pw=***&t=***'],
    ['https://host/x?sv=2024&se=2025&sp=r&sig=zz', 'https://host/x?sv=***&se=***&sp=***&sig=***'],
    // More names that say secret: abbreviations and other spellings.
    [
      'https://host/x?tok=1&pwd=2&jwt=3&bearer=4&hmac=5&private_key=6&X-Amz-Credential=7&cookie=8',
      'https://host/x?tok=***&pwd=***&jwt=***&bearer=***&hmac=***&private_key=***&X-Amz-Credential=***&cookie=***',
    ],
    // A name written percent-encoded is read decoded; it is shown as written.
    ['https://host/x?api%5Fkey=abc&ke%79=d', 'https://host/x?api%5Fkey=***&ke%79=***'],
    // Some servers split the query at `;` too: a secret after one is masked as after `&`.
    ['https://host/x?model=m;token=xyz', 'https://host/x?model=m;token=***'],
    // The other values are shown as written, not encoded again.
    ['https://host/x?path=a/b:c&key=z', 'https://host/x?path=a/b:c&key=***'],
    // The whole userinfo is masked, the user name too: it may be the key itself.
    ['https://sk-live-123@host/x', 'https://***@host/x'],
    ['https://:only-a-password@host', 'https://***@host'],
    ['https://user:@host', 'https://***@host'],
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
    const secrets = requestSecrets('http://user:p%40ss@host/x?api_key=qk-9&version=1', undefined);
    assert.equal(scrubSecrets('p@ss p%40ss qk-9 version=1 user', secrets), '*** *** *** version=1 user');
  });

  test('the query values maskUrl masks are those scrubbed: short names, `;` separators, encoded names', () => {
    const secrets = requestSecrets('http://host/x?k=kv-1&model=m;token=tv-2&ke%79=kv-3&version=4', undefined);
    assert.equal(scrubSecrets('kv-1 tv-2 kv-3 m 4', secrets), '*** *** *** m 4');
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

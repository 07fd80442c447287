// What a sign-in's start keeps (gateway/identity/sign-in-start.ts): a return_to only as a path of
// the gateway's own origin, read as a browser's URL parser reads a Location, with no control
// character; and the client it is counted against, an IPv6 address by its /64.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { returnPath, signInClient } from '../../../gateway/identity/sign-in-start.ts';

const ORIGIN = 'https://llm.example.com';

test('a return_to is kept only as a path of the gateway, as the URL parser writes it', () => {
  for (const [returnTo, expected] of [
    [undefined, '/playground/'],
    ['/playground/#usage', '/playground/#usage'],
    ['/v1/me?x=1', '/v1/me?x=1'],
    ['https://llm.example.com/admin/', '/admin/'],
    ['/a b/é', '/a%20b/%C3%A9'],
    ['/\t/evil.example', '/playground/'],
    ['/\\evil.example', '/playground/'],
    ['//evil.example/', '/playground/'],
    ['https://evil.example/', '/playground/'],
    ['https://llm.example.com.evil.example/', '/playground/'],
    ['javascript:alert(1)', '/playground/'],
    ['/a\r\nSet-Cookie: x=1', '/playground/'],
    ['/a\nb', '/playground/'],
    ['/a\u007fb', '/playground/'],
    ['http://[', '/playground/'],
  ] as const) {
    assert.equal(returnPath(returnTo, ORIGIN), expected, JSON.stringify(returnTo));
  }
});

test('a client is its IPv4 address, or its IPv6 address by its /64', () => {
  for (const [address, expected] of [
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ] as const) {
    assert.equal(signInClient(address), expected, address);
  }
});

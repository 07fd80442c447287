// What a verified token's claims say of its caller (gateway/identity/token-identity.ts): the
// identity, name and groups as the issuer's configuration names them, and the id of the user made
// for an identity no user lists: always a valid id, and never the same for two identities.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ResourceId } from '../../../core/resources/fields.ts';
import { IssuerConfig } from '../../../gateway/identity/identity-config.ts';
import { identityOf, userIdFor } from '../../../gateway/identity/token-identity.ts';

const issuer = (more: object = {}) => IssuerConfig.parse({ name: 'idp', issuer: 'https://idp.example', audiences: ['tollgate'], ...more });

describe('a token identity', () => {
  test('is the user claim, named by the name claim (else the identity), in the groups claim; no groups claim: groups unknown', () => {
    const claims = { sub: 'u-1', email: 'ann@example.com', name: ' Ann ', groups: ['eng', '', 'ops'], exp: 2_000_000_000 };
    assert.deepEqual(identityOf(issuer({ groups_claim: 'groups' }), claims), {
      issuer: issuer({ groups_claim: 'groups' }),
      subject: 'u-1',
      name: 'Ann',
      groups: ['eng', 'ops'],
      expiresAt: 2_000_000_000_000,
    });
    const byEmail = identityOf(issuer({ user_claim: 'email', name_claim: 'nickname' }), claims);
    assert.ok(!('problem' in byEmail));
    assert.deepEqual([byEmail.subject, byEmail.name, byEmail.groups], ['ann@example.com', 'ann@example.com', undefined]);
    assert.deepEqual(identityOf(issuer({ groups_claim: 'groups' }), { sub: 'x', groups: 'eng' }), {
      ...identityOf(issuer({ groups_claim: 'groups' }), { sub: 'x', groups: ['eng'] }),
    });
  });

  test('a groups claim left out is groups unknown, not an empty list; one that is not a list of groups is refused', () => {
    const leftOut = identityOf(issuer({ groups_claim: 'groups' }), { sub: 'u-1' });
    assert.ok(!('problem' in leftOut));
    assert.deepEqual([leftOut.groups, leftOut.groupsLeftOut], [undefined, true]);
    const empty = identityOf(issuer({ groups_claim: 'groups' }), { sub: 'u-1', groups: [] });
    assert.ok(!('problem' in empty));
    assert.deepEqual([empty.groups, empty.groupsLeftOut], [[], undefined]);
    for (const groups of [42, null, true, { eng: true }, ['eng', 7]])
      assert.deepEqual(identityOf(issuer({ groups_claim: 'groups' }), { sub: 'u-1', groups }), {
        problem: 'the token\'s groups claim "groups" is not a list of groups',
        refusal: 'bad_groups',
      });
  });

  test('without its user claim, a token names no one', () => {
    assert.deepEqual(identityOf(issuer({ user_claim: 'email' }), { sub: 'u-1' }), {
      problem: 'the token has no claim "email" naming its user',
    });
  });

  test("of a Kubernetes service account: the groups Kubernetes gives it, from the token's namespace", () => {
    const claims = {
      sub: 'system:serviceaccount:apps:summarizer',
      'kubernetes.io': { namespace: 'apps', serviceaccount: { name: 'summarizer', uid: 'f3c3' } },
    };
    const found = identityOf(issuer({ kubernetes: true }), claims);
    assert.ok(!('problem' in found));
    assert.deepEqual(found.groups, ['system:serviceaccounts', 'system:serviceaccounts:apps']);
  });
});

describe('the id of a user made for an identity', () => {
  test("is a valid id of the issuer's name and the identity's letters and digits, and a hash", () => {
    assert.match(userIdFor('okta', 'alice'), /^okta-alice-[0-9a-f]{8}$/);
    assert.match(userIdFor('okta', 'Ann@Example.com'), /^okta-ann-example-com-[0-9a-f]{8}$/);
    assert.match(
      userIdFor('kubernetes', 'system:serviceaccount:apps:summarizer'),
      /^kubernetes-system-serviceaccount-apps-summarizer-[0-9a-f]{8}$/,
    );
    assert.match(userIdFor('idp', '@@@'), /^idp-[0-9a-f]{8}$/);
    const longest = 'i'.repeat(63);
    for (const identity of ['a.b@x.io', 'a-b@x.io', 'x'.repeat(400), `${'y'.repeat(53)}-z`, '00000000-0000-0000-0000-000000000000'])
      for (const issuer of ['idp', longest]) assert.ok(ResourceId.safeParse(userIdFor(issuer, identity)).success, `${issuer} ${identity}`);
  });

  test('differs for two identities written alike, and for one identity of two issuers', () => {
    assert.notEqual(userIdFor('idp', 'a.b@x.io'), userIdFor('idp', 'a-b@x.io'));
    assert.notEqual(userIdFor('idp', 'Alice'), userIdFor('idp', 'alice'));
    assert.notEqual(userIdFor('idp', 'alice'), userIdFor('other', 'alice'));
    // Names and identities that join alike (`a` + `b-c`, `a-b` + `c`) are two users still.
    assert.notEqual(userIdFor('a', 'b-c'), userIdFor('a-b', 'c'));
  });
});

// An identity provider's bearer JWTs for a test file: its keys served on a real socket
// (fake-jwks.ts), tokens signed for the gateway's audience, and identity files trusting it,
// written to a directory removed when the file's tests end.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWTPayload } from 'jose';
import type { IdentityConfigInput } from '../../gateway/identity/identity-config.ts';
import { signingKey, signToken, startFakeJwks } from './fake-jwks.ts';

export const AUDIENCE = 'tollgate';

export interface TokenIssuer {
  /** Its `iss`: http://127.0.0.1:<port>, whose discovery document names its keys. */
  readonly issuer: string;
  /**
   * An identity file trusting the issuer as `idp` (groups in the claim `groups`, `platform` the
   * admin group, unmapped groups refused), with `more` over it and `issuer` over its issuer.
   */
  identityFile(more?: Partial<IdentityConfigInput>, issuer?: Record<string, unknown>): Promise<string>;
  /** A token of the issuer for AUDIENCE, valid for ten minutes, with `claims` over it. */
  token(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export async function startTokenIssuer(): Promise<TokenIssuer> {
  const key = await signingKey('key-1');
  const jwks = await startFakeJwks([key]);
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-issuer-'));
  let files = 0;
  const now = () => Math.floor(Date.now() / 1000);
  return {
    issuer: jwks.issuer,
    async identityFile(more = {}, issuer = {}) {
      const file = join(dir, `identity-${++files}.yaml`);
      const config = {
        issuers: [{ name: 'idp', issuer: jwks.issuer, audiences: [AUDIENCE], algorithms: ['RS256'], groups_claim: 'groups', ...issuer }],
        admin_groups: ['platform'],
        unmapped: 'refuse',
        ...more,
      };
      await writeFile(file, JSON.stringify(config)); // JSON is YAML
      return file;
    },
    token: (claims) => signToken(key, { iss: jwks.issuer, aud: AUDIENCE, iat: now(), nbf: now(), exp: now() + 600, ...claims }),
    async close() {
      await jwks.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Headers sending `token` as OpenAI's clients send a key. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

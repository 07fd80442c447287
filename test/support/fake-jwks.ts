// An issuer's signing keys on a real socket, as an identity provider serves them (`jwks_uri`): the
// test holds the private keys, signs tokens with them, and decides what the endpoint does: serve
// the public keys it is told to, fail (503), or hang without answering.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** The public key as SPKI PEM text: what an attacker would use as an HS256 secret. */
  readonly publicPem: string;
}

export interface FakeJwks {
  /** http://127.0.0.1:<port>/jwks */
  readonly url: string;
  /** http://127.0.0.1:<port>: an issuer whose discovery document (`/.well-known/openid-configuration`) names `url`. */
  readonly issuer: string;
  /** How many times the keys were asked for. */
  readonly fetches: number;
  /** Serves these keys' public halves from now on. */
  serve(keys: readonly SigningKey[]): void;
  /** 'serve' (the default), 'fail' (503) or 'hang' (never answers); ends a flood. */
  behave(mode: 'serve' | 'fail' | 'hang'): void;
  /**
   * Answers the keys served padded to `bytes` bytes from now on: with its Content-Length declared
   * (then sent whole if read), or (`declared: false`) sent in chunks without one and never ended.
   */
  flood(bytes: number, options: { readonly declared: boolean }): void;
  /** How many answers the client stopped reading before their end (closed the connection). */
  readonly abandoned: number;
  close(): Promise<void>;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const der = Buffer.from(await crypto.subtle.exportKey('spki', publicKey));
  const publicPem = `-----BEGIN PUBLIC KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PUBLIC KEY-----\n`;
  return { kid, privateKey, publicJwk, publicPem };
}

/** A token of `claims` signed by `key` (RS256, its kid in the header). */
export function signToken(key: SigningKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

export async function startFakeJwks(keys: readonly SigningKey[]): Promise<FakeJwks> {
  let served = keys;
  let mode: 'serve' | 'fail' | 'hang' | 'flood' = 'serve';
  let flooding = { bytes: 0, declared: true };
  let fetches = 0;
  let abandoned = 0;
  const hanging = new Set<ServerResponse>();
  let issuer = '';
  const server: Server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration' && (mode === 'serve' || mode === 'flood')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      return;
    }
    fetches++;
    if (mode === 'hang') {
      hanging.add(response);
      response.on('close', () => hanging.delete(response));
      return;
    }
    if (mode === 'flood') {
      response.on('close', () => {
        if (!response.writableFinished) abandoned++;
      });
      void flood(response, served, flooding, hanging);
      return;
    }
    if (mode === 'fail') {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: served.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  issuer = `http://127.0.0.1:${port}`;
  return {
    url: `${issuer}/jwks`,
    issuer,
    get fetches() {
      return fetches;
    },
    serve(next) {
      served = next;
    },
    behave(next) {
      mode = next;
    },
    flood(bytes, options) {
      mode = 'flood';
      flooding = { bytes, declared: options.declared };
    },
    get abandoned() {
      return abandoned;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A JWKS of `keys` padded (an extra member) to `bytes` bytes, written as fast as the client reads it. */
async function flood(
  response: ServerResponse,
  keys: readonly SigningKey[],
  { bytes, declared }: { readonly bytes: number; readonly declared: boolean },
  hanging: Set<ServerResponse>,
): Promise<void> {
  const head = `{"keys":${JSON.stringify(keys.map((key) => key.publicJwk))},"padding":"`;
  const tail = '"}';
  response.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': bytes } : {}) });
  const chunk = 'x'.repeat(64 * 1024);
  let left = bytes - head.length - tail.length;
  response.write(head);
  while (left > 0 && !response.destroyed) {
    const piece = left >= chunk.length ? chunk : chunk.slice(0, left);
    left -= piece.length;
    if (!response.write(piece)) await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
  }
  if (response.destroyed) return;
  if (declared) response.end(tail);
  else {
    hanging.add(response); // never ended: only the client can stop it
    response.on('close', () => hanging.delete(response));
  }
}

// Where an issuer's signing keys are read from (jwks-cache.ts loads them through one of these):
// a `jwks_uri` given in the configuration, the one the issuer's discovery document names, or the
// Kubernetes API server's own (`/openid/v1/jwks`), read with the gateway's service-account
// credentials and the cluster's CA, as the API server serves it only to authenticated callers.
// What an issuer's endpoint answers is read up to a size bound and no further: a body declared or
// found larger is refused, the rest left unread (a JWKS is a few kB; a huge one would cost a
// parse and its memory at each fetch).
import { z } from 'zod';
import type { KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { JwksLoader } from './jwks-cache.ts';

/** The JSON at `url`, of at most `maxBytes` bytes; rejects on a status other than 2xx, a larger body, or text not JSON. */
async function getJson(url: string, signal: AbortSignal, maxBytes: number): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${response.status}`);
  }
  if (Number(response.headers.get('content-length')) > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw tooLarge(url, maxBytes);
  }
  return JSON.parse(await readBounded(response.body, url, maxBytes));
}

/** The body as text, read until its end or until it passes `maxBytes` (then refused, the rest not read). */
async function readBounded(body: ReadableStream<Uint8Array> | null, url: string, maxBytes: number): Promise<string> {
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, bytes).toString('utf8');
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      void reader.cancel().catch(() => {});
      throw tooLarge(url, maxBytes);
    }
    chunks.push(value);
  }
}

const tooLarge = (url: string, maxBytes: number) => new Error(`${url} answered a body larger than ${maxBytes} bytes`);

/** The keys served at a known `jwks_uri`. */
export function jwksAt(url: string): JwksLoader {
  return (signal, maxBytes) => getJson(url, signal, maxBytes);
}

const DiscoveryDocument = z.object({ issuer: z.string(), jwks_uri: z.url() });

/** An issuer's OpenID discovery document (`<issuer>/.well-known/openid-configuration`), checked to name the issuer itself. */
export async function discover(issuer: string, signal: AbortSignal, maxBytes: number): Promise<z.output<typeof DiscoveryDocument>> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const document = DiscoveryDocument.parse(await getJson(url, signal, maxBytes));
  // OpenID Connect Discovery 1.0, 4.3: a document naming another issuer must not be used.
  if (document.issuer !== issuer) throw new Error(`the discovery document of ${issuer} names the issuer ${document.issuer}`);
  return document;
}

/** The keys at the `jwks_uri` the issuer's discovery document names, read once and kept. */
export function jwksByDiscovery(issuer: string): JwksLoader {
  let jwksUri: string | undefined;
  return async (signal, maxBytes) => {
    jwksUri ??= (await discover(issuer, signal, maxBytes)).jwks_uri;
    return await getJson(jwksUri, signal, maxBytes);
  };
}

/**
 * The Kubernetes API server's service-account signing keys, as it serves them to an authenticated
 * client. Not read under the size bound: the kube client reads its answers whole, and this one is
 * the cluster's own API server's (its key count is still checked, jwks-cache.ts).
 */
export function jwksOfKubernetes(client: KubeClient): JwksLoader {
  return (signal) => client.request({ path: '/openid/v1/jwks', accept: 'application/jwk-set+json', signal });
}

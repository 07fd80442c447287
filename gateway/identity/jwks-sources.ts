// Where an issuer's signing keys are read from (jwks-cache.ts loads them through one of these):
// a `jwks_uri` given in the configuration, the one the issuer's discovery document names, or the
// Kubernetes API server's own (`/openid/v1/jwks`), read with the gateway's service-account
// credentials and the cluster's CA, as the API server serves it only to authenticated callers.
import { z } from 'zod';
import type { KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { JwksLoader } from './jwks-cache.ts';

/** The JSON at `url`; rejects on a status other than 2xx. */
async function getJson(url: string, signal: AbortSignal): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${response.status}`);
  }
  return await response.json();
}

/** The keys served at a known `jwks_uri`. */
export function jwksAt(url: string): JwksLoader {
  return (signal) => getJson(url, signal);
}

const DiscoveryDocument = z.object({ issuer: z.string(), jwks_uri: z.url() });

/** An issuer's OpenID discovery document (`<issuer>/.well-known/openid-configuration`), checked to name the issuer itself. */
export async function discover(issuer: string, signal: AbortSignal): Promise<z.output<typeof DiscoveryDocument>> {
  const document = DiscoveryDocument.parse(await getJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, signal));
  // OpenID Connect Discovery 1.0, 4.3: a document naming another issuer must not be used.
  if (document.issuer !== issuer) throw new Error(`the discovery document of ${issuer} names the issuer ${document.issuer}`);
  return document;
}

/** The keys at the `jwks_uri` the issuer's discovery document names, read once and kept. */
export function jwksByDiscovery(issuer: string): JwksLoader {
  let jwksUri: string | undefined;
  return async (signal) => {
    jwksUri ??= (await discover(issuer, signal)).jwks_uri;
    return await getJson(jwksUri, signal);
  };
}

/** The Kubernetes API server's service-account signing keys, as it serves them to an authenticated client. */
export function jwksOfKubernetes(client: KubeClient): JwksLoader {
  return (signal) => client.request({ path: '/openid/v1/jwks', accept: 'application/jwk-set+json', signal });
}

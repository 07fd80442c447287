// A provider's replicas as the ready endpoints of a Kubernetes Service, in place of listed
// addresses: `service_ref` of a self-hosted engine (vLLM, TEI). The gateway follows the Service's
// EndpointSlices and serves one replica per ready address (gateway/kubernetes/service-endpoints.ts);
// this file holds the shape and how an address and a port become a replica's base URL.
import { z } from 'zod';

/** A Service's name: a DNS-1035 label. */
const ServiceName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z]([a-z0-9-]*[a-z0-9])?$/, 'must be a Service name: lowercase letters, digits and -, starting with a letter');

/** A Service port by number, or by its name (an IANA service name, as Kubernetes checks it). */
export const ServicePort = z
  .union([
    z.number().int().min(1, 'must be a port from 1 to 65535').max(65535, 'must be a port from 1 to 65535'),
    z
      .string()
      .max(15, 'must be a port name of at most 15 characters')
      .regex(
        /^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/,
        'must be a port number, or a port name: lowercase letters, digits and -, at least one letter',
      ),
  ])
  .describe("The Service's port: its number, or its name as the Service's ports list it.");

/** The Service fields a ModelProvider sets; the namespace is its own (the operator adds it). */
export const SERVICE_REF_FIELDS = {
  name: ServiceName.describe('Name of the Service whose ready endpoints are the replicas.'),
  port: ServicePort,
  scheme: z.enum(['http', 'https']).default('http').describe('How the replicas are spoken to.'),
  path: z
    .string()
    .max(512, 'must be at most 512 characters')
    .regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with /')
    .refine((path) => !/\/v1\/?$/.test(path), 'must not end with /v1 (the gateway adds the API path)')
    .optional()
    .describe('Path appended to each replica address, as the path of a url (without /v1).'),
};

export const ServiceRef = z
  .strictObject({
    namespace: z
      .string()
      .max(63)
      .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be a Kubernetes namespace name')
      .optional()
      .describe("Namespace of the Service; absent: the gateway's own. Set by the operator from the ModelProvider's namespace."),
    ...SERVICE_REF_FIELDS,
  })
  .describe(
    "A Kubernetes Service whose ready endpoints are the provider's replicas, in place of url or urls (Kubernetes mode only): the gateways follow its EndpointSlices, one replica per ready address.",
  );
export type ServiceRef = z.output<typeof ServiceRef>;

/** The base URL of a replica at `address` (an IPv4 or IPv6 address, or a host name) and `port`. */
export function endpointUrl(ref: Pick<ServiceRef, 'scheme' | 'path'>, address: string, port: number): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return `${ref.scheme}://${host}:${port}${(ref.path ?? '').replace(/\/+$/, '')}`;
}

/**
 * Why a gateway outside Kubernetes cannot serve `providers`: the first that names a Service (no
 * Kubernetes API to follow its endpoints there), with its index; undefined when none does.
 */
export function serviceRefOutsideKubernetes(providers: readonly object[]): { index: number; message: string } | undefined {
  const index = providers.findIndex((provider) => 'service_ref' in provider && provider.service_ref !== undefined);
  if (index < 0) return undefined;
  return {
    index,
    message:
      "names a Kubernetes Service, whose endpoints only a gateway in Kubernetes mode follows (there is no Kubernetes API here); list the replicas' addresses in urls (args.api_urls in a file) instead",
  };
}

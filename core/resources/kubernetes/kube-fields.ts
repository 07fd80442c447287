// Field types of Kubernetes objects, as the custom resources' specs and statuses use them: object
// names, Secret keys, and money as decimal strings (the API conventions discourage floats).
import { z } from 'zod';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The name of an object in the same namespace (a DNS subdomain, as Kubernetes names are). */
export const ObjectName = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(DNS_SUBDOMAIN, 'must be a Kubernetes object name: lowercase letters, digits, - and ., starting and ending with a letter or digit');

/** metadata.name of a GatewayUser: a DNS label, because it is also the gateway's user id. */
export const UserObjectName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lowercase letters, digits and -, starting and ending with a letter or digit')
  .describe('Name of the GatewayUser, also its user id in the gateway: a DNS label of at most 63 characters.');

/** A key of a Secret's data. */
export const SecretKey = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret data key: letters, digits, -, _ and .');

/**
 * A non-negative decimal amount as text, with at most `scale` decimal places: how money travels
 * in Kubernetes objects (the API conventions discourage floats). The integer part has at most 15
 * digits, the limit of the gateway's exact decimal arithmetic.
 */
export function decimalString(scale: number) {
  return z
    .string()
    .regex(
      new RegExp(`^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,${scale}})?$`),
      `must be a non-negative decimal number written as a string, such as "0.15", with at most ${scale} decimal places`,
    );
}
/** Prices per million tokens: 9 decimals, as the gateway's PricePerMillion. */
export const PriceString = decimalString(9);
/** Budgets and amounts spent: 6 decimals, as the gateway's Money. */
export const MoneyString = decimalString(6);

// The value types settings are declared with, shared by the gateway's settings groups
// (gateway/config/settings/*.ts): whole numbers in a range, booleans given as a flag or as text,
// and Kubernetes names, each with the message a wrong value gets.
import { z } from 'zod';

/** A whole number from `min` to `max`, given as a number (a flag) or as text (a variable). */
export const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** true or false, as a flag (a boolean) or a variable (the text). */
export const Bool = (fallback: boolean) =>
  z
    .preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false']))
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');
/** A namespace name (an RFC 1123 label) or a ConfigMap or Secret name (an RFC 1123 subdomain). */
export const DnsLabel = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name (lower-case letters, digits and -)');
export const DnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name (lower-case letters, digits, - and .)');

// Field schemas shared by several resources.
import { z } from 'zod';
import { parseDecimal } from '../money/decimal.ts';

/** Router names and aliases: what clients put in `model`. */
export const ModelName = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/, 'must start with a letter or digit and use only letters, digits and . _ : / @ + -');

/** Internal resource ids (provider ids, user ids): DNS-label-like so they also fit Kubernetes. */
export const ResourceId = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be lowercase letters, digits and -, starting and ending with a letter or digit');

/** A price per `unit`, as a number or a decimal string, kept as the exact decimal string. */
function price(unit: string) {
  return z.union([z.number(), z.string()]).transform((value, ctx) => {
    const text = typeof value === 'number' ? String(value) : value.trim();
    const parsed = parseDecimal(text, 9);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: `price per ${unit} ${parsed.reason}` });
      return z.NEVER;
    }
    if (parsed.value < 0n) {
      ctx.addIssue({ code: 'custom', message: `price per ${unit} must not be negative` });
      return z.NEVER;
    }
    return parsed.canonical;
  });
}

/**
 * A price per one million tokens. Accepted as a number or a decimal string (Kubernetes objects
 * carry money as strings); kept as the exact decimal string so no float residue enters the
 * cost formula.
 */
export const PricePerMillion = price('million tokens');

/** A price per minute of audio (transcription routers), accepted and kept as PricePerMillion is. */
export const PricePerMinute = price('minute of audio');

/** Base address of a backend: http(s), no path ending in /v1 (the adapter adds its own paths). */
export const BaseUrl = z
  .string()
  .url({ message: 'must be an absolute http:// or https:// URL', abort: true })
  .refine((u) => /^https?:\/\//i.test(u), 'must be an absolute http:// or https:// URL')
  .refine((u) => !/\/v1\/?$/.test(u), 'must be the base address without /v1 (the gateway adds the API path)')
  .transform((u) => u.replace(/\/+$/, ''));

/** Seconds, as the spec says for provider timeouts. */
export const TimeoutSeconds = z.number().positive('must be more than 0 seconds').max(3600, 'must be at most 3600 seconds');

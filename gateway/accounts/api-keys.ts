// API keys: 256 random bits with a recognisable prefix, shown once and stored only as a hash.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'tg-';

export interface NewKey {
  /** The secret: give it to the caller once, never store it. */
  readonly secret: string;
  readonly hash: string;
  readonly hint: string;
}

export function generateKey(): NewKey {
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { secret, hash: hashKey(secret), hint: hintOf(secret) };
}

/** SHA-256 is enough for 256-bit random secrets: there is nothing to brute-force. */
export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function hintOf(secret: string): string {
  return `${KEY_PREFIX}…${secret.slice(-4)}`;
}

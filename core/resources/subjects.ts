// The identities a user is (a user's `subjects`, a GatewayUser's `spec.subjects`), scoped by
// issuer (issue 46): `<issuer>#<subject>`, the name of an issuer of the gateway's identity file
// and the value of its user claim (`okta#ann@example.com`,
// `kubernetes#system:serviceaccount:apps:summarizer`). Two issuers may give one `sub` to two
// different people: scoped, one issuer's token is never a user listing another's identity.
// Subjects written before they were scoped (no `<issuer>#`) are still read, as the identity of the
// issuer the identity file's `unscoped_subjects` names (gateway/identity/identity-subjects.ts); the
// admin API takes only scoped ones.
import { z } from 'zod';

/** Longest user claim value read from a token. */
export const MAX_CLAIMED_SUBJECT = 500;

/** An issuer's name (a ResourceId, which holds no `#`), `#`, and the rest: the user claim's value. */
const SCOPED = /^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)#([\s\S]+)$/;

/** A subject as a user lists it: scoped, or unscoped as written before (read by the documented rule). */
export const Subject = z
  .string()
  .min(1, 'must not be empty')
  .max(64 + MAX_CLAIMED_SUBJECT);

/** The identity `subject` of the issuer named `issuer`, as users list it. */
export function scopedSubject(issuer: string, subject: string): string {
  return `${issuer}#${subject}`;
}

/** Whether `subject` is written scoped, `<issuer>#<subject>` (anything else was written before subjects were scoped). */
export function isScoped(subject: string): boolean {
  return SCOPED.test(subject);
}

/** How a subject is written, for a message refusing one that names no issuer. */
export const SUBJECT_FORMAT =
  '<issuer>#<subject>: the name of an issuer of the identity file, #, and the value of its user claim (e.g. okta#ann@example.com)';

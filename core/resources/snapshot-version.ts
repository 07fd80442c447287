// A snapshot's version is a digest of its content: equal content, equal version, on every pod.
import { createHash } from 'node:crypto';

export function snapshotVersion(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16);
}

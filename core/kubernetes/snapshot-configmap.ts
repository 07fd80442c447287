// The routing snapshot as a ConfigMap: written by the operator, read by gateway pods. It carries
// its format, version and a SHA-256 of the JSON, so a reader never loads a half-written or
// incompatible snapshot; past COMPRESS_ABOVE bytes it is gzipped into binaryData, which keeps
// 5,000 routers with 4 providers each well inside the 1 MiB object limit. No secret is in it:
// provider keys travel in a Secret of their own (docs/kubernetes-design.md).
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SNAPSHOT_FORMAT, Snapshot } from '../resources/snapshot.ts';

export const SNAPSHOT_KEY = 'snapshot.json';
export const SNAPSHOT_GZIP_KEY = 'snapshot.json.gz';
export const ANNOTATIONS = {
  format: 'tollgate.dev/snapshot-format',
  version: 'tollgate.dev/snapshot-version',
  sha256: 'tollgate.dev/snapshot-sha256',
} as const;
/** Above this many bytes of JSON the snapshot is stored gzipped. */
export const COMPRESS_ABOVE = 256 * 1024;

export interface SnapshotConfigMapContent {
  annotations: Record<string, string>;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export function encodeSnapshot(snapshot: Snapshot): SnapshotConfigMapContent {
  for (const provider of snapshot.providers) {
    if (provider.key !== undefined) throw new Error(`provider ${provider.id} carries a key: keys never enter the routing ConfigMap`);
  }
  const json = JSON.stringify(snapshot, leaveOutAddedDefaults);
  const annotations = {
    [ANNOTATIONS.format]: String(SNAPSHOT_FORMAT),
    [ANNOTATIONS.version]: snapshot.version,
    [ANNOTATIONS.sha256]: sha256(json),
  };
  if (Buffer.byteLength(json) <= COMPRESS_ABOVE) return { annotations, data: { [SNAPSHOT_KEY]: json } };
  return { annotations, binaryData: { [SNAPSHOT_GZIP_KEY]: gzipSync(json, { level: 9 }).toString('base64') } };
}

/**
 * Fields added to the snapshot's format since gateways began reading it, with the value that
 * means they are not used. Left out at that value, a snapshot stays readable by a gateway of an
 * earlier version (its schemas are strict), as during a rolling upgrade; the schemas of this
 * version fill them back in.
 */
const ADDED_FIELDS: Readonly<Record<string, unknown>> = { audio_minutes: '0' };

function leaveOutAddedDefaults(key: string, value: unknown): unknown {
  return Object.hasOwn(ADDED_FIELDS, key) && ADDED_FIELDS[key] === value ? undefined : value;
}

export type DecodeResult = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

/** Reads a snapshot back, refusing anything whose format, checksum or shape is not right. */
export function decodeSnapshot(content: Partial<SnapshotConfigMapContent>): DecodeResult {
  const annotations = content.annotations ?? {};
  if (annotations[ANNOTATIONS.format] !== String(SNAPSHOT_FORMAT)) {
    return { ok: false, reason: `snapshot format ${annotations[ANNOTATIONS.format] ?? '(none)'} is not ${SNAPSHOT_FORMAT}` };
  }
  let json = content.data?.[SNAPSHOT_KEY];
  const gz = content.binaryData?.[SNAPSHOT_GZIP_KEY];
  if (json === undefined && gz !== undefined) {
    try {
      json = gunzipSync(Buffer.from(gz, 'base64')).toString('utf8');
    } catch {
      return { ok: false, reason: 'the compressed snapshot cannot be decompressed' };
    }
  }
  if (json === undefined) return { ok: false, reason: 'the ConfigMap holds no snapshot' };
  if (sha256(json) !== annotations[ANNOTATIONS.sha256]) return { ok: false, reason: 'the snapshot does not match its checksum' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'the snapshot is not JSON' };
  }
  const snapshot = Snapshot.safeParse(parsed);
  if (!snapshot.success) return { ok: false, reason: `the snapshot is not valid: ${snapshot.error.issues[0]?.message}` };
  if (snapshot.data.version !== annotations[ANNOTATIONS.version]) return { ok: false, reason: 'the snapshot does not match its version' };
  return { ok: true, snapshot: snapshot.data };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

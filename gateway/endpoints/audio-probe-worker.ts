// The worker thread that reads an uploaded audio file's duration (audio-probe.ts starts it): the
// scan can take seconds of CPU (an MP3 without a Xing header is read frame by frame; a run of 0xFF
// bytes is tried as a frame header at every position), which must not stop the event loop that
// serves every other request.
//
// One job at a time, as audio-probe.ts sends them: { id, bytes, mimeType, giveBack }. When the
// bytes were transferred here (giveBack), they are sent back at once, before the scan, and the
// scan reads a copy: whatever then happens to this thread (a scan past its time, stopped; a crash),
// the gateway still has the file to forward. Then { id, seconds } (undefined: not read).
import { parentPort } from 'node:worker_threads';
import { parseBuffer } from 'music-metadata';

export interface ProbeJob {
  readonly id: number;
  readonly bytes: ArrayBuffer;
  readonly mimeType: string;
  /** The bytes were the gateway's own (transferred, not copied): send them back before the scan. */
  readonly giveBack: boolean;
}

export type ProbeMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'bytes'; readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly kind: 'seconds'; readonly id: number; readonly seconds: number | undefined };

/**
 * The audio's duration from its header: music-metadata reads the container (a WAV's byte rate and
 * data size, an MP3's frame headers, ...). Undefined for a file it does not recognise or whose
 * header is cut short.
 */
export async function headerSeconds(bytes: Uint8Array, mimeType: string): Promise<number | undefined> {
  try {
    const { format } = await parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

const port = parentPort;
if (port) {
  port.on('message', async (job: ProbeJob) => {
    let bytes = new Uint8Array(job.bytes);
    if (job.giveBack) {
      bytes = bytes.slice();
      port.postMessage({ kind: 'bytes', id: job.id, bytes: job.bytes } satisfies ProbeMessage, [job.bytes]);
    }
    const seconds = await headerSeconds(bytes, job.mimeType);
    port.postMessage({ kind: 'seconds', id: job.id, seconds } satisfies ProbeMessage);
  });
  port.postMessage({ kind: 'ready' } satisfies ProbeMessage);
}

// The worker thread that reads an uploaded audio file's duration (audio-probe.ts starts it): the
// scan can take seconds of CPU (an MP3 without a Xing header is read frame by frame; a run of 0xFF
// bytes is tried as a frame header at every position), which must not stop the event loop that
// serves every other request.
//
// One job at a time, as audio-probe.ts sends them: { id, bytes, mimeType, giveBack }. The scan
// reads the bytes where they are (a copy of 25 MB held here until this thread's next garbage
// collection kept RSS 110 MB up); then { id, seconds } (undefined: not read), with the bytes
// transferred back when they were the gateway's own (giveBack). A scan stopped past its time, or
// a thread that dies, takes them with it: that upload is refused.
import { parentPort } from 'node:worker_threads';
import { parseBuffer } from 'music-metadata';

export interface ProbeJob {
  readonly id: number;
  /** The file's bytes are `length` bytes of it, from its start (it may be larger: the upload's buffer). */
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly mimeType: string;
  /** The bytes were the gateway's own (transferred, not copied): send them back after the scan. */
  readonly giveBack: boolean;
}

export type ProbeMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'seconds'; readonly id: number; readonly seconds: number | undefined; readonly bytes?: ArrayBuffer };

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
    const seconds = await headerSeconds(new Uint8Array(job.bytes, 0, job.length), job.mimeType);
    if (job.giveBack) port.postMessage({ kind: 'seconds', id: job.id, seconds, bytes: job.bytes } satisfies ProbeMessage, [job.bytes]);
    else port.postMessage({ kind: 'seconds', id: job.id, seconds } satisfies ProbeMessage);
  });
  port.postMessage({ kind: 'ready' } satisfies ProbeMessage);
}

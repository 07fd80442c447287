// An audio file uploaded for transcription, read whole (up to the upload limit) before it is
// forwarded: its duration, which its price and hold depend on, is read from its header first, in
// a worker thread of the scan pool (audio-probe.ts), and believed only as far as the file's size
// can hold it.
import type { AudioProbe } from './audio-probe.ts';

/**
 * A form's file as it arrived (http/multipart-body.ts), its duration not read yet: the pipeline
 * reads it once the caller may call the router and can pay for the least of it
 * (pipeline/audio-reading.ts).
 */
export class AudioUpload {
  readonly bytes: Buffer;
  readonly filename: string;
  readonly mimeType: string;
  /** The memory under `bytes` holds the file alone (audio-probe.ts). */
  readonly owned: boolean;

  constructor(bytes: Buffer, filename: string, mimeType: string, owned: boolean) {
    this.bytes = bytes;
    this.filename = filename;
    this.mimeType = mimeType;
    this.owned = owned;
  }
}

export interface AudioFile {
  readonly bytes: Buffer;
  readonly filename: string;
  readonly mimeType: string;
  /** Its length in seconds, from its header (WAV, MP3, FLAC, OGG, M4A, WebM, ...); undefined when it could not be read, or is not believed. */
  readonly seconds: number | undefined;
  /** Why `seconds` is undefined, when there is more to say than that the file was not recognised. */
  readonly unreadable?: string;
}

/** A file whose duration was read (or tried): not an upload still to be read. */
export function isAudioFile(value: unknown): value is AudioFile {
  return value !== null && typeof value === 'object' && !(value instanceof AudioUpload) && Buffer.isBuffer((value as AudioFile).bytes);
}

/**
 * The fewest bytes a second of audio is believed to take: 100 (0.8 kbit/s). Below every speech
 * codec in a container music-metadata reads (Opus from 6 kbit/s, AMR-NB 4.75, Speex 2.15, MP3 8;
 * Codec2's 0.7 kbit/s radio modes come in none); only long runs of digital silence (a FLAC's
 * constant frames, Opus's DTX) fall below it. A header that claims more seconds than its file's
 * size holds at this rate is not believed: 242 bytes of FLAC claiming 55,555 hours were priced,
 * held and simulated as such. At 25 MiB, the upload limit, it still believes up to 72 hours.
 */
export const MIN_AUDIO_BYTES_PER_SECOND = 100;

/**
 * The file as it came, with its duration: read from its header off the event loop by `probe`,
 * within its time, and not believed past what its size holds (MIN_AUDIO_BYTES_PER_SECOND). When
 * it is not read or not believed, `seconds` is undefined: a priced router refuses the file, a
 * free one forwards it. `caller`: whose scans it counts among (the probe bounds them); rejects
 * as the probe's scan does when refused.
 */
export async function readAudioFile(upload: AudioUpload, probe: Pick<AudioProbe, 'scan'>, caller?: string): Promise<AudioFile> {
  const { bytes, filename, mimeType, owned } = upload;
  const probed = await probe.scan(bytes, mimeType, { owned, caller });
  if (!probed.bytes) throw new AudioLostError(probed.unreadable ?? 'its reading stopped');
  const file = { bytes: probed.bytes, filename, mimeType };
  if (probed.seconds === undefined) return { ...file, seconds: undefined, unreadable: probed.unreadable };
  const unbelieved = implausibleDuration(probed.seconds, probed.bytes.length);
  return unbelieved ? { ...file, seconds: undefined, unreadable: unbelieved } : { ...file, seconds: probed.seconds };
}

/** The upload's bytes went with a duration scan that was stopped (past its time) or died: it cannot be forwarded. */
export class AudioLostError extends Error {
  override name = 'AudioLostError';
}

/** Why `seconds` of audio cannot be in `bytes` bytes; undefined when they can. */
export function implausibleDuration(seconds: number, bytes: number): string | undefined {
  const most = bytes / MIN_AUDIO_BYTES_PER_SECOND;
  if (seconds <= most) return undefined;
  const hours = seconds >= 3600 ? ` (${round(seconds / 3600)} h)` : '';
  return `its header claims ${round(seconds)} s${hours} of audio, but its ${bytes} bytes can hold at most ${round(most)} s (${MIN_AUDIO_BYTES_PER_SECOND} bytes a second, less than any speech codec makes)`;
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * The most text tokens a transcript of `seconds` of audio can hold: Whisper decodes at most 448
 * tokens per 30-second window (about 900 a minute, where speech is about 200), and one window at
 * least. What a hold covers and a report is believed up to.
 */
export function transcriptTokenBound(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 30)) * 448;
}

/**
 * Input tokens a backend that reports them may count per second of audio: Whisper's encoder makes
 * 50 frames a second (1500 per 30-second window); OpenAI's gpt-4o-transcribe reports fewer.
 */
export const AUDIO_TOKENS_PER_SECOND = 50;

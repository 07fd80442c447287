// An audio file uploaded for transcription, read whole (up to the upload limit) before it is
// forwarded: its duration, which its price and hold depend on, is read from its header first.
import { parseBuffer } from 'music-metadata';

export interface AudioFile {
  readonly bytes: Buffer;
  readonly filename: string;
  readonly mimeType: string;
  /** Its length in seconds, from its header (WAV, MP3, FLAC, OGG, M4A, WebM, ...); undefined when it could not be read. */
  readonly seconds: number | undefined;
}

export function isAudioFile(value: unknown): value is AudioFile {
  return value !== null && typeof value === 'object' && Buffer.isBuffer((value as AudioFile).bytes);
}

/**
 * The audio's duration from its header: music-metadata reads the container (a WAV's byte rate and
 * data size, an MP3's frame headers, ...). Undefined for a file it does not recognise or whose
 * header is cut short: not every backend format is one it reads, so the caller decides.
 */
export async function audioSeconds(bytes: Buffer, mimeType: string): Promise<number | undefined> {
  try {
    const { format } = await parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

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

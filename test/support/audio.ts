// Audio files the tests forge themselves, beside wav.ts's honest WAV: a FLAC whose STREAMINFO
// claims a length its bytes cannot hold, a run of 0xFF bytes that MP3 sync search chokes on, and
// a variable-bitrate MP3 without a Xing header, whose length is found only by reading every frame.

/**
 * A FLAC file of `size` bytes (242 by default) whose header claims `seconds` of audio: 'fLaC', then
 * one metadata block header (last-block flag, type 0 STREAMINFO, 24-bit length 34), then
 * STREAMINFO: min/max block size (16 bits each), min/max frame size (24 bits each), the sample rate
 * (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36), and a 16-byte MD5; the
 * rest zeros, where frames would be. The sample count must stay below 2^31, as music-metadata
 * reads it in 32-bit arithmetic: 55,555 hours at 10 samples a second, 555 hours at 1,000.
 */
export function flacClaiming(seconds: number, sampleRate: number, size = 242): Buffer {
  const samples = BigInt(Math.round(seconds * sampleRate));
  if (samples >= 2n ** 31n) throw new Error('music-metadata reads at most 2^31 - 1 samples');
  const file = Buffer.alloc(size);
  file.write('fLaC', 0, 'latin1');
  file[4] = 0x80; // the last metadata block, of type 0 (STREAMINFO)
  file.writeUIntBE(34, 5, 3);
  const info = 8;
  file.writeUInt16BE(4096, info); // min block size
  file.writeUInt16BE(4096, info + 2); // max block size
  // Frame sizes (6 bytes) unknown: 0. Then 64 bits: rate (20), channels - 1 (3: mono), bits - 1 (5: 16 bits), samples (36).
  file.writeBigUInt64BE((BigInt(sampleRate) << 44n) | (0n << 41n) | (15n << 36n) | samples, info + 10);
  return file;
}

/** Bitrates of MPEG-1 Layer III by the header's 4-bit index, in kbit/s. */
const MPEG1_LAYER3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] as const;

/**
 * A variable-bitrate MP3 of at most `bytes` bytes with no Xing, Info or VBRI header: MPEG-1 Layer
 * III frames at 48 kHz, mono, their bitrates cycling through 32, 48, 64, 40 and 56 kbit/s (speech,
 * about 70 minutes in 25 MB), each a valid 4-byte frame header and a body of zeros. Without the
 * Xing header the only way to its length is to read every frame's header: its `seconds` are
 * the frames' count times 1152 samples over 48,000 a second.
 */
export function vbrMp3(bytes: number): { bytes: Buffer; seconds: number; frames: number } {
  const cycle = [1, 3, 5, 2, 4];
  const lengths: number[] = [];
  let size = 0;
  for (let n = 0; ; n++) {
    const index = cycle[n % cycle.length]!;
    const length = Math.floor((144 * MPEG1_LAYER3_KBPS[index]! * 1000) / 48_000);
    if (size + length > bytes) break;
    lengths.push(length);
    size += length;
  }
  const file = Buffer.alloc(size);
  let at = 0;
  for (let n = 0; n < lengths.length; n++) {
    file[at] = 0xff; // sync (11 bits), MPEG-1 (2), Layer III (2), no CRC (1)
    file[at + 1] = 0xfb;
    file[at + 2] = (cycle[n % cycle.length]! << 4) | (1 << 2); // the bitrate's index, 48 kHz, no padding
    file[at + 3] = 0xc4; // mono, original
    at += lengths[n]!;
  }
  return { bytes: file, seconds: (lengths.length * 1152) / 48_000, frames: lengths.length };
}

/**
 * `bytes` bytes of 0xFF: every position looks like the start of an MPEG frame header, and
 * music-metadata tries each in turn (about 4 seconds a megabyte, 105 s for 25 MB, on one core).
 */
export function syncStorm(bytes: number): Buffer {
  return Buffer.alloc(bytes, 0xff);
}

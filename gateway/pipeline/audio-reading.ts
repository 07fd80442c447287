// A transcription's audio is read (its duration, in the scan pool: endpoints/audio-probe.ts) only
// for a caller who may call the router and can pay for the least transcription on it: reading
// junk costs a scan thread up to 10 s, which a caller without budget must not take from others.
// Before it, the body is the form as it arrived (its file an AudioUpload); after it, its file is
// an AudioFile with its duration, for the endpoint's schema (resolve.ts).
import { mayCall, type Caller } from '../accounts/caller.ts';
import type { Billing } from '../billing/billing.ts';
import { errors } from '../api/api-error.ts';
import { AudioLostError, AudioUpload, readAudioFile } from '../endpoints/audio-file.ts';
import type { AudioProbe } from '../endpoints/audio-probe.ts';
import type { RouterRoute } from '../routing/routing-table.ts';

export interface AudioReading {
  readonly billing: Pick<Billing, 'checkAudioRoom'>;
  /** The scan pool: bounded per caller, its wait bounded (its refusals: error-map.ts). */
  readonly scans: Pick<AudioProbe, 'scan'>;
}

/**
 * The form with its file's duration read, for `router`: refused first when the caller may not
 * call it (403) or has no room for its least transcription (402). A form without an upload is
 * left as it is, for the schema to refuse.
 */
export async function withAudioRead(form: unknown, router: RouterRoute, caller: Caller, deps: AudioReading): Promise<unknown> {
  const upload = (form as { file?: unknown }).file;
  if (!(upload instanceof AudioUpload)) return form;
  if (!mayCall(caller, router.spec.name)) throw errors.modelNotAllowed();
  await deps.billing.checkAudioRoom(caller, router);
  try {
    return { ...(form as object), file: await readAudioFile(upload, deps.scans, caller.user.id) };
  } catch (error) {
    if (error instanceof AudioLostError) throw errors.invalidRequest(`The audio file could not be read: ${error.message}`, 'file');
    throw error;
  }
}

// A stand-in for gateway/endpoints/audio-probe-worker.ts that keeps its protocol but holds a scan
// until the test lets it go: a file of type audio/x-hold is announced on the broadcast channel
// of held-scans.ts and answered only once the test releases the scans held; any other is "read"
// as 42 seconds at once. Its bytes are sent back as the real worker sends them.
import { BroadcastChannel, parentPort } from 'node:worker_threads';
import type { ProbeJob, ProbeMessage } from '../../gateway/endpoints/audio-probe-worker.ts';
import { HELD_SCANS_CHANNEL, type HeldScanNews } from './held-scans.ts';

const port = parentPort!;
const news = new BroadcastChannel(HELD_SCANS_CHANNEL);
let held: ProbeJob | undefined;

function answer(job: ProbeJob): void {
  if (job.giveBack) port.postMessage({ kind: 'seconds', id: job.id, seconds: 42, bytes: job.bytes } satisfies ProbeMessage, [job.bytes]);
  else port.postMessage({ kind: 'seconds', id: job.id, seconds: 42 } satisfies ProbeMessage);
}

news.onmessage = (event) => {
  if ((event as { readonly data: HeldScanNews }).data.kind !== 'release' || !held) return;
  const job = held;
  held = undefined;
  answer(job);
  news.postMessage({ kind: 'released', id: job.id } satisfies HeldScanNews);
};

port.on('message', (job: ProbeJob) => {
  if (job.mimeType !== 'audio/x-hold') return answer(job);
  held = job;
  news.postMessage({ kind: 'holding', id: job.id } satisfies HeldScanNews);
});
port.postMessage({ kind: 'ready' } satisfies ProbeMessage);

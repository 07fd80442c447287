// A stand-in for gateway/endpoints/audio-probe-worker.ts that keeps its protocol but dies on
// demand: a file of type audio/x-crash ends the thread once its bytes are given back; any other
// is "read" as 42 seconds.
import { parentPort } from 'node:worker_threads';
import type { ProbeJob, ProbeMessage } from '../../gateway/endpoints/audio-probe-worker.ts';

const port = parentPort!;
port.on('message', (job: ProbeJob) => {
  if (job.giveBack) port.postMessage({ kind: 'bytes', id: job.id, bytes: job.bytes } satisfies ProbeMessage, [job.bytes]);
  if (job.mimeType === 'audio/x-crash') setTimeout(() => process.exit(1), 20);
  else port.postMessage({ kind: 'seconds', id: job.id, seconds: 42 } satisfies ProbeMessage);
});
port.postMessage({ kind: 'ready' } satisfies ProbeMessage);

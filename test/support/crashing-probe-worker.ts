// A stand-in for gateway/endpoints/audio-probe-worker.ts that keeps its protocol but dies on
// demand: a file of type audio/x-crash ends the thread while it holds the file's bytes; any other
// is "read" as 42 seconds, its bytes sent back.
import { parentPort } from 'node:worker_threads';
import type { ProbeJob, ProbeMessage } from '../../gateway/endpoints/audio-probe-worker.ts';

const port = parentPort!;
port.on('message', (job: ProbeJob) => {
  if (job.mimeType === 'audio/x-crash') setTimeout(() => process.exit(1), 20);
  else if (job.giveBack)
    port.postMessage({ kind: 'seconds', id: job.id, seconds: 42, bytes: job.bytes } satisfies ProbeMessage, [job.bytes]);
  else port.postMessage({ kind: 'seconds', id: job.id, seconds: 42 } satisfies ProbeMessage);
});
port.postMessage({ kind: 'ready' } satisfies ProbeMessage);

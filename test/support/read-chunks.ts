// Reads a provider's chunk stream (gateway/providers/chunk-stream.ts) to its end, as the relay
// does: every chunk into `seen` (so a test sees what came before a failure), then the array, or
// the failure as a rejection.
import type { ChunkStream } from '../../gateway/providers/chunk-stream.ts';
import type { JsonObject } from '../../gateway/wire/openai-wire.ts';

export function readChunks(
  stream: ChunkStream,
  seen: JsonObject[] = [],
  onChunk: (chunk: JsonObject) => void = () => {},
): Promise<JsonObject[]> {
  return new Promise((resolve, reject) => {
    stream.start({
      chunk(chunk) {
        seen.push(chunk);
        onChunk(chunk);
      },
      flush() {},
      end: () => resolve(seen),
      fail: reject,
    });
  });
}

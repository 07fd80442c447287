// The floor of the LLM-shaped run: a bare Node streaming proxy, node:http and undici with
// nothing else (no framework, auth, parsing, usage or metrics): the request's bytes go to the
// upstream as they are, the answer's bytes come back as they arrive, and reading from the
// upstream pauses while the client's socket is full. What it costs is what the runtime and
// its HTTP libraries cost for these streams on this machine, before any work of a gateway.
// Run as `node bench/llm/stream-proxy.ts <port> <upstream origin>`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent } from 'undici';

const [port, origin] = [Number(process.argv[2]), process.argv[3]];
if (!port || !origin) {
  process.stderr.write('usage: node bench/llm/stream-proxy.ts <port> <upstream origin>\n');
  process.exit(2);
}
const agent = new Agent({ keepAliveTimeout: 30_000 });

function forward(body: Buffer, path: string, response: ServerResponse): void {
  agent.dispatch(
    { origin, path, method: 'POST', headers: { 'content-type': 'application/json' }, body },
    {
      onRequestStart() {},
      onResponseStart(controller, status, headers) {
        response.writeHead(status, { 'content-type': String(headers['content-type'] ?? 'application/octet-stream') });
        response.once('close', () => {
          if (!response.writableFinished) controller.abort(new Error('the client went away'));
        });
      },
      onResponseData(controller, chunk) {
        if (!response.write(chunk)) {
          controller.pause();
          response.once('drain', () => controller.resume());
        }
      },
      onResponseEnd() {
        response.end();
      },
      onResponseError(_controller, error) {
        if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(String(error));
      },
    },
  );
}

createServer({ keepAliveTimeout: 75_000 }, (request: IncomingMessage, response: ServerResponse) => {
  const parts: Buffer[] = [];
  request.on('data', (chunk: Buffer) => parts.push(chunk));
  request.on('end', () => forward(Buffer.concat(parts), request.url ?? '/', response));
}).listen(port, '127.0.0.1', 8192);

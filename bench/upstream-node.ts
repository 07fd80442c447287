// Fallback zero-latency upstream when nginx is not installed: node:http answering the same fixed
// bodies as the nginx upstream. Run as `node bench/upstream-node.ts <json-port> <sse-port>`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { CHAT_JSON, CHAT_SSE, VLLM_METRICS } from './bodies.ts';

function serve(port: number, body: string, contentType: string): void {
  const bytes = Buffer.from(body);
  const headers = { 'content-type': contentType, 'content-length': String(bytes.length) };
  const metrics = Buffer.from(VLLM_METRICS);
  const metricsHeaders = { 'content-type': 'text/plain; version=0.0.4', 'content-length': String(metrics.length) };
  const server = createServer({ keepAliveTimeout: 75_000 }, (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.once('end', () => {
      // The gateway reads a vllm provider's load from its /metrics (engine signals).
      if (request.url === '/metrics') response.writeHead(200, metricsHeaders).end(metrics);
      else response.writeHead(200, headers).end(bytes);
    });
  });
  server.listen(port, '127.0.0.1', 4096);
}

const [jsonPort, ssePort] = process.argv.slice(2).map(Number);
if (!jsonPort || !ssePort) {
  process.stderr.write('usage: node bench/upstream-node.ts <json-port> <sse-port>\n');
  process.exit(2);
}
serve(jsonPort, CHAT_JSON, 'application/json');
serve(ssePort, CHAT_SSE, 'text/event-stream');

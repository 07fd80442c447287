// The collector of `npm run bench -- --tracing`: it reads every OTLP/HTTP export sent to it and
// drops it, so that what tracing sends is sent for real, and says on exit how much it received.
// Run as `node bench/otlp-sink.ts <port>`.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: node bench/otlp-sink.ts <port>\n');
  process.exit(2);
}
let requests = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (part: Buffer) => {
    bytes += part.length;
  });
  request.on('end', () => {
    requests++;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ requests, bytes })}\n`);
  process.exit(0);
});

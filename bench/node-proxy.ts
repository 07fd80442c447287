// The floor under the gateway, a reference contender of the benchmark: node:http and undici and
// nothing else (no framework, no auth, no validation, no metrics, no usage record), doing the
// least any gateway does to a non-streamed chat: parse the request, forward it, parse the answer,
// put the router's name in `model` and a cost in `usage`, answer. What it reaches is what the
// runtime and the HTTP libraries allow on this machine before the gateway's own work.
// Run as `node bench/node-proxy.ts <port> <upstream origin>`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { forwardChat } from './proxy-work.ts';

const [port, origin] = [Number(process.argv[2]), process.argv[3]];
if (!port || !origin) {
  process.stderr.write('usage: node bench/node-proxy.ts <port> <upstream origin>\n');
  process.exit(2);
}
const upstream = new Pool(origin);

createServer({ keepAliveTimeout: 75_000 }, (request: IncomingMessage, response: ServerResponse) => {
  let text = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => (text += chunk));
  request.on('end', () => {
    forwardChat(upstream, text).then(
      (answer) => {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
        response.end(answer);
      },
      (error: unknown) => {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(String(error));
      },
    );
  });
}).listen(port, '127.0.0.1', 4096);

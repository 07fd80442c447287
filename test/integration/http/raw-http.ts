// Requests written byte for byte on a TCP socket, for what fetch would normalise away: an
// absolute-form request line (`GET http://host/v1/models HTTP/1.1`), a path with raw
// percent-encoding, or headers larger than the server accepts.
import { connect } from 'node:net';

export interface RawHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `head` (request line and headers, without the blank line) and reads the answer until the server closes. */
export function rawRequest(url: string, head: string): Promise<RawHttpAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close at once on a request it refuses (431) while this side still writes:
    // the reset that follows is expected, and the answer read before it is what counts.
    socket.on('error', (error) => {
      if (chunks.length === 0) reject(error);
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}

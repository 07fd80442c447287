// What Node's HTTP server answers, before Fastify or any route sees the request, when the bytes
// received are not a request it can hand on: headers too large (431), a request not received
// in time (408), or no valid HTTP at all (400). Fastify's default writes its own JSON shape; this
// writes the API's error envelope instead, so every answer a client reads has the same shape.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { type ApiError, errors } from '../api/api-error.ts';

/** For Fastify's `clientErrorHandler` option. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) socket.write(rawAnswer(clientError(error.code)));
  socket.destroy(error);
}

function clientError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout();
  return errors.malformedRequest();
}

/** A whole HTTP/1.1 answer; the connection closes after it (the request could not be read). */
function rawAnswer(error: ApiError): string {
  const body = JSON.stringify(error);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

// How many connections the gateway holds, and for how long one may sit idle. Without bounds, a
// connection that never sends a request is held for ever (Node times out neither it nor its
// socket: Fastify turns requestTimeout off and sets no socket timeout), and 20,000 of them used
// up the file descriptors, /healthz included.
//
// - Idle: a connection with no request in flight is closed after `idleMs`: before its first
//   request (a socket timeout, cleared as the request arrives, so a long stream is never cut),
//   and between two (Node's keepAliveTimeout). Headers that trickle in are bounded by Node's
//   headersTimeout (60 s), a body by the gateway's own deadlines (body-deadlines.ts).
// - Cap: past `maxConnections` open at once, a connection is still taken, in a reserve of
//   HEALTH_RESERVE, for the probes (`/healthz`, `/readyz`, `/metrics`): any other request on it
//   is answered 503 `too_many_connections`, and it closes after its answer. Past the reserve,
//   Node closes new connections as they are accepted.
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A probe's route (health, readiness, metrics): answered on a connection of the reserve too. */
    probe?: boolean;
  }
}

/** Connections past the cap taken for the probes, so that a full gateway still says how it is. */
export const HEALTH_RESERVE = 32;

export interface ConnectionBounds {
  /** Longest a connection may stay open without a request in flight (ms). */
  readonly idleMs: number;
  /** Most connections open at once for requests of any kind. */
  readonly maxConnections: number;
}

export interface ConnectionLimits {
  readonly bounds: ConnectionBounds;
  /** The connection was taken past the cap: it is for the probes only. */
  reserved(socket: Socket): boolean;
}

/** Sets the bounds on `server` (before it listens). */
export function limitConnections(server: Server, bounds: ConnectionBounds): ConnectionLimits {
  const { idleMs, maxConnections } = bounds;
  server.keepAliveTimeout = idleMs;
  server.maxConnections = maxConnections + HEALTH_RESERVE;
  const reserve = new WeakSet<Socket>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    if (open > maxConnections) reserve.add(socket);
    // With no listener for the server's 'timeout', Node destroys the socket when it fires.
    socket.setTimeout(idleMs);
  });
  // The first request on a connection clears the timeout above: from then on Node's
  // keepAliveTimeout bounds the time between requests (it clears its own as the next arrives).
  server.on('request', (request: IncomingMessage) => {
    if (request.socket.timeout) request.socket.setTimeout(0);
  });
  return { bounds, reserved: (socket) => reserve.has(socket) };
}

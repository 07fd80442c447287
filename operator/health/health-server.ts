// The operator's only HTTP surface, for the kubelet and Prometheus: /healthz (liveness),
// /readyz (readiness) and /metrics. It answers from state the operator already holds and never
// calls the API server or Redis, so a slow dependency cannot make a probe time out and get a
// healthy replica restarted. Nothing here reads settings or objects, so no secret can leak.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Log } from '../../core/log.ts';
import type { OperatorMetrics } from './metrics.ts';

export interface HealthStatus {
  /** undefined once ready; otherwise why not (e.g. the informers' caches not synced yet). */
  notReadyReason(): string | undefined;
  isLeader(): boolean;
  readonly identity: string;
  /** Which Redis, as /readyz says it (undefined before the store is open). */
  redis(): object | undefined;
}

export interface HealthServerOptions {
  readonly host: string;
  /** 0: a free port, reported by `port` (tests). */
  readonly port: number;
  readonly status: HealthStatus;
  readonly metrics: OperatorMetrics;
  readonly log: Log;
}

export interface RunningHealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<RunningHealthServer> {
  const server = createServer((request, response) => {
    handle(options, request, response).catch((error: unknown) => {
      options.log.warn({ err: error, path: request.url }, 'health server: request failed');
      if (!response.headersSent) json(response, 500, { error: 'internal error' });
      else response.destroy();
    });
  });
  // Probes and scrapes are short; an idle keep-alive connection must not hold shutdown up.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info({ host: options.host, port }, 'health server listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(options: HealthServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://health').pathname;
  // Only reads are served; any other method or path is simply not here.
  const route = request.method === 'GET' || request.method === 'HEAD' ? path : undefined;
  switch (route) {
    case '/healthz':
      // Answering at all is the liveness signal: the event loop runs. Informers and the elector
      // retry on their own, and restarting would not make an unreachable API server reachable.
      return json(response, 200, { status: 'ok' });
    case '/readyz': {
      const reason = options.status.notReadyReason();
      // A standby replica is ready too: it keeps warm caches and must not be restarted for not leading.
      const redis = options.status.redis();
      if (reason !== undefined) return json(response, 503, { status: 'not ready', reason, redis });
      return json(response, 200, { status: 'ready', leader: options.status.isLeader(), identity: options.status.identity, redis });
    }
    case '/metrics': {
      const body = await options.metrics.registry.metrics();
      response.writeHead(200, { 'content-type': options.metrics.registry.contentType });
      response.end(body);
      return;
    }
    default:
      return json(response, 404, { error: 'not found' });
  }
}

function json(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

// The routes of the APIs on the request path, one per entry of the surface table
// (pipeline/api-surfaces.ts). Each hands its request to the pipeline, which owns it from there;
// this file only turns Fastify's request and reply into the pipeline's terms.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnswerChannel, ClientStream } from '../../pipeline/answer-channel.ts';
import { API_SURFACES } from '../../pipeline/api-surfaces.ts';
import type { SurfaceRequest } from '../../pipeline/surface-request.ts';
import type { RequestPipeline } from '../../pipeline/request-pipeline.ts';
import { TIMEOUT_HEADER } from '../../pipeline/resolve.ts';
import { callerOf } from '../auth.ts';

export function registerApiSurfaces(app: FastifyInstance, pipeline: RequestPipeline): void {
  for (const surface of API_SURFACES) {
    // The API's error envelope, and whether its body is a multipart form (multipart-body.ts).
    const config = { errorBody: surface.errorBody, multipart: surface.kind === 'inference' && surface.multipart };
    if (surface.kind === 'local') {
      app.route({
        method: surface.method,
        url: surface.path,
        config,
        handler: (request) => surface.answer(surfaceRequest(request), pipeline.services),
      });
      continue;
    }
    app.route({
      method: surface.method,
      url: surface.path,
      config,
      handler: async (request, reply) => {
        const answer = await pipeline.serve(surface, surfaceRequest(request), new ReplyChannel(reply));
        // A stream was written to the connection, taken over.
        if (answer === undefined) return undefined;
        reply.headers(answer.headers);
        return answer.text;
      },
    });
  }
}

function surfaceRequest(request: FastifyRequest): SurfaceRequest {
  return {
    caller: callerOf(request),
    body: request.body,
    bodyBytes: request.bodyBytes,
    params: request.params as Record<string, string>,
    timeout: request.headers[TIMEOUT_HEADER],
    headers: request.headers,
    authTiming: request.authTiming,
  };
}

/** The pipeline's way to the client: Fastify's reply, its raw response taken over for a stream. */
class ReplyChannel implements AnswerChannel {
  readonly #reply: FastifyReply;

  constructor(reply: FastifyReply) {
    this.#reply = reply;
  }

  openStream(headers: Readonly<Record<string, string>>): ClientStream {
    this.#reply.hijack();
    return this.#reply.raw.writeHead(200, headers);
  }

  onClientGone(listener: () => void): void {
    const raw = this.#reply.raw;
    raw.once('close', () => {
      if (!raw.writableFinished) listener();
    });
  }
}

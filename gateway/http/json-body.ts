// The JSON body parser, in place of Fastify's own, for three things it does not do:
// - a client learns where its JSON breaks, or that a key name is refused although its JSON is
//   valid (Fastify answers every failure "Body is not valid JSON"). The parse is the same
//   (secure-json-parse, which refuses the prototype-poisoning keys __proto__ and
//   constructor.prototype);
// - the body's shape is bounded as it arrives (json-shape.ts): a body of millions of tiny values
//   is refused before JSON.parse and the schemas would spend seconds of the event loop on it;
// - the body must arrive in time (body-deadlines.ts): 408, not a connection held for ever.
// A GET or DELETE with `Content-Type: application/json` and no body (many HTTP clients send the
// header on every request) has no body, not an empty one; and a URL that matches no route is not
// parsed at all, so it is answered 404 whatever its body.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import secureJson from 'secure-json-parse';
import { ApiError, errors } from './api-error.ts';
import type { BodyDeadlines } from './body-deadlines.ts';
import { JsonShape, type JsonShapeLimits } from './json-shape.ts';

const OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
/** What secure-json-parse throws for __proto__ or constructor.prototype. */
const FORBIDDEN = 'Object contains forbidden prototype property';
/** Methods whose requests need no body: an empty one is no body. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export interface JsonBodyLimits {
  /** Largest body, in bytes. */
  readonly bytes: number;
  readonly shape: JsonShapeLimits;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's length in bytes, as received (0 without one). */
    bodyBytes: number;
  }
}

type Done = (error: Error | null, body?: unknown) => void;

export function registerJsonBody(app: FastifyInstance, limits: JsonBodyLimits, deadlines: BodyDeadlines): void {
  app.decorateRequest('bodyBytes', 0);
  const parse = (request: FastifyRequest, payload: IncomingMessage, done: Done) =>
    readJson(request, payload, limits, deadlines).then(
      (body) => done(null, body),
      (error: ApiError) => done(error, undefined),
    );
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => void parse(request, payload as IncomingMessage, done));
  // JSON Merge Patch (RFC 7396), what the admin API's PATCH is, has a media type of its own: the
  // same JSON, read the same way, but only a PATCH's; any other method refuses it as any type it
  // does not take.
  app.addContentTypeParser('application/merge-patch+json', (request, payload, done) => {
    if (request.method !== 'PATCH') return done(errors.unsupportedMediaType(request.headers['content-type']), undefined);
    void parse(request, payload as IncomingMessage, done);
  });
}

/** Reads the body as it arrives, its shape counted on the way, then parses it. */
function readJson(request: FastifyRequest, payload: IncomingMessage, limits: JsonBodyLimits, deadlines: BodyDeadlines): Promise<unknown> {
  // A URL that matches no route is answered 404 whatever its body: it is read to nowhere.
  const kept = !request.is404;
  const declared = Number(request.headers['content-length']);
  if (kept && declared > limits.bytes) return Promise.reject(errors.bodyTooLarge(limits.bytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const shape = new JsonShape(limits.shape);
    let received = 0;
    const watch = deadlines.watch((why, ms) => end(errors.bodyTimeout(why, ms)));
    const onData = (chunk: Buffer) => {
      watch.received(chunk.length);
      if (!kept) return;
      received += chunk.length;
      const violation = received > limits.bytes ? errors.bodyTooLarge(limits.bytes) : shape.feed(chunk);
      if (violation === undefined) chunks.push(chunk);
      else end(violation instanceof ApiError ? violation : errors.bodyShape(violation));
    };
    const onEnd = () => end(undefined);
    // A client gone before its body ended: nobody reads the answer, but what was read is let go.
    const onClose = () => end(errors.malformedRequest());
    /** Stops reading: a refusal (the connection closes after it, the rest unread), or the whole body, parsed. */
    function end(error: ApiError | undefined): void {
      watch.stop();
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onClose);
      payload.off('close', onClose);
      try {
        if (error) throw error;
        resolve(kept ? parseJson(request, chunks, received) : undefined);
      } catch (failure) {
        reject(failure);
      }
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onClose);
    payload.on('close', onClose);
    payload.resume();
  });
}

/** The body read whole, parsed: undefined for an empty one of a method that needs none. */
function parseJson(request: FastifyRequest, chunks: readonly Buffer[], received: number): unknown {
  request.bodyBytes = received;
  const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
  if (text.length === 0) {
    if (BODILESS.has(request.method)) return undefined;
    throw errors.emptyBody();
  }
  try {
    return secureJson.parse(text, undefined, OPTIONS);
  } catch (error) {
    throw error instanceof SyntaxError && error.message === FORBIDDEN
      ? errors.reservedJsonKey()
      : errors.invalidJson((error as Error).message);
  }
}

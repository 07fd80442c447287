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
import { ApiError, errors } from '../api/api-error.ts';
import type { BodyDeadlines } from './body-deadlines.ts';
import { JsonShape, type JsonShapeLimits } from './json-shape.ts';
import { BodyBuffer } from './body-buffer.ts';
import { arrival } from './read-pace.ts';

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
    // Most bodies come in one chunk; the others are gathered in a buffer as they arrive.
    let first: Buffer | undefined;
    let gathered: BodyBuffer | undefined;
    const shape = new JsonShape(limits.shape);
    let received = 0;
    const arriving = arrival(payload, deadlines, (why, ms) => end(errors.bodyTimeout(why, ms)));
    const onData = (chunk: Buffer) => {
      arriving.chunk(chunk);
      if (!kept) return;
      received += chunk.length;
      const violation = received > limits.bytes ? errors.bodyTooLarge(limits.bytes) : shape.feed(chunk);
      if (violation !== undefined) return end(violation instanceof ApiError ? violation : errors.bodyShape(violation));
      if (gathered) gathered.append(chunk);
      else if (first === undefined) first = chunk;
      else {
        gathered = new BodyBuffer(declared, limits.bytes);
        gathered.append(first);
        gathered.append(chunk);
        first = undefined;
      }
    };
    const onEnd = () => end(undefined);
    // A client gone before its body ended: nobody reads the answer, but what was read is let go.
    const onClose = () => end(errors.malformedRequest());
    /** Stops reading: a refusal (the connection closes after it, the rest unread), or the whole body, parsed. */
    function end(error: ApiError | undefined): void {
      arriving.stop();
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onClose);
      payload.off('close', onClose);
      if (error) reject(error);
      else if (!kept) resolve(undefined);
      else {
        request.bodyBytes = received;
        const bytes = gathered ? gathered.take() : (first ?? EMPTY);
        if (bytes.length > LARGE_BODY_BYTES) parseLarge(request, bytes, shape.suspect).then(resolve, reject);
        else {
          try {
            const text = decoded(request, bytes);
            resolve(text === undefined ? undefined : parsedJson(text, shape.suspect));
          } catch (failure) {
            reject(failure);
          }
        }
      }
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onClose);
    payload.on('close', onClose);
    payload.resume();
  });
}

/**
 * The body read whole, parsed (undefined: an empty body of a method that needs none). Only a body
 * whose keys could poison prototypes (`suspect`, json-shape.ts) goes through secure-json-parse,
 * which refuses them; any other is plain JSON.parse. A large body's decoding, its parse and what
 * follows (the schemas) each take their own turn of the event loop, so that other requests are
 * answered between them: a 10 MB prompt took 30 ms to decode and 40 ms to parse, one after the
 * other. A small one is parsed at once.
 */
async function parseLarge(request: FastifyRequest, bytes: Buffer, suspect: boolean): Promise<unknown> {
  const text = decoded(request, bytes);
  if (text === undefined) return undefined;
  await yieldTurn();
  const parsed = parsedJson(text, suspect);
  await yieldTurn();
  return parsed;
}

/** The body's text; undefined for an empty body of a method that needs none. */
function decoded(request: FastifyRequest, bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  if (text.length > 0) return text;
  if (BODILESS.has(request.method)) return undefined;
  throw errors.emptyBody();
}

function parsedJson(text: string, suspect: boolean): unknown {
  try {
    return suspect ? secureJson.parse(text, undefined, OPTIONS) : JSON.parse(text);
  } catch (error) {
    throw error instanceof SyntaxError && error.message === FORBIDDEN
      ? errors.reservedJsonKey()
      : errors.invalidJson((error as Error).message);
  }
}

/** Past this, a body's decoding, parse and checks take turns of their own. */
const LARGE_BODY_BYTES = 256 * 1024;
const EMPTY = Buffer.alloc(0);
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

// The JSON body parser, in place of Fastify's own, which answers every failure with "Body is not
// valid JSON" and drops the reason. The parse is the same (secure-json-parse, which refuses the
// prototype-poisoning keys __proto__ and constructor.prototype), but a client now learns where
// its JSON breaks, or that a key name is refused although its JSON is valid.
// A GET or DELETE with `Content-Type: application/json` and no body (many HTTP clients send the
// header on every request) has no body, not an empty one; and a URL that matches no route is not
// parsed at all, so it is answered 404 whatever its body.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { errors } from './api-error.ts';

const OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
/** What secure-json-parse throws for __proto__ or constructor.prototype. */
const FORBIDDEN = 'Object contains forbidden prototype property';
/** Methods whose requests need no body: an empty one is no body. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (request.is404) return done(null, undefined);
    if (text.length === 0) return done(BODILESS.has(request.method) ? null : errors.emptyBody(), undefined);
    try {
      done(null, secureJson.parse(text, undefined, OPTIONS));
    } catch (error) {
      done(
        error instanceof SyntaxError && error.message === FORBIDDEN
          ? errors.reservedJsonKey()
          : errors.invalidJson((error as Error).message),
        undefined,
      );
    }
  });
}

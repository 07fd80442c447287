// The JSON body parser, in place of Fastify's own, which answers every failure with "Body is not
// valid JSON" and drops the reason. The parse is the same (secure-json-parse, which refuses the
// prototype-poisoning keys __proto__ and constructor.prototype), but a client now learns where
// its JSON breaks, or that a key name is refused although its JSON is valid.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { errors } from './api-error.ts';

const OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
/** What secure-json-parse throws for __proto__ or constructor.prototype. */
const FORBIDDEN = 'Object contains forbidden prototype property';

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(errors.emptyBody(), undefined);
    try {
      done(null, secureJson.parse(text, undefined, OPTIONS));
    } catch (error) {
      done(error instanceof SyntaxError && error.message === FORBIDDEN ? errors.reservedJsonKey() : errors.invalidJson((error as Error).message), undefined);
    }
  });
}

// Zod schemas as the response schemas of Fastify routes, in place of a type provider package: the
// type provider below makes a handler's return value checked against its schema at compile time,
// and the serializer compiler checks each answer at run time, then writes it with JSON.stringify,
// so the bytes are those of the object the handler returned (field order included). The check
// is the guard that keeps secrets out of answers: every view is a strict object, so a field its
// schema does not name (a key's hash, a provider's key) is a 500, logged, instead of an answer.
// Only the routes of the admin API, /v1/me, /v1/usage and /v1/models are given schemas: the
// inference routes have none, so nothing here runs on their path. Server code: the Playground
// imports the views' types, never this file.
import type { FastifyInstance, FastifySerializerCompiler, FastifyTypeProvider } from 'fastify';
import { z } from 'zod';

/** A route's zod schemas as the types of its request and of what its handler returns. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  readonly serializer: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
}

/** An answer that is not of its route's response schema: a bug of the gateway's, never sent. */
export class ResponseShapeError extends Error {
  constructor(route: string, error: z.ZodError) {
    super(`The answer of ${route} does not match its response schema:\n${z.prettifyError(error)}`);
    this.name = 'ResponseShapeError';
  }
}

/** Checks `data` against `schema` (throws ResponseShapeError, naming `route`), then writes it as JSON. */
export function checkedJson(schema: z.ZodType, route: string): (data: unknown) => string {
  return (data) => {
    const checked = schema.safeParse(data);
    if (!checked.success) throw new ResponseShapeError(route, checked.error);
    return JSON.stringify(data);
  };
}

const compileChecked: FastifySerializerCompiler<unknown> = ({ schema, method, url, httpStatus }) => {
  // Found when the route is registered: a JSON Schema here would otherwise go unchecked.
  if (!(schema instanceof z.ZodType)) throw new TypeError(`${method} ${url}: a response schema must be a zod schema`);
  return checkedJson(schema, `${method} ${url} (${httpStatus})`);
};

/**
 * The routes registered on `instance` (a plugin's scope) take zod response schemas, checked at
 * run time (above) and at compile time (the returned instance's type provider).
 */
export function withResponseSchemas(instance: FastifyInstance) {
  instance.setSerializerCompiler(compileChecked);
  return instance.withTypeProvider<ZodTypeProvider>();
}

/** A route's options that give its answers' schemas, by status code. */
export function responds<Response extends Readonly<Record<number, z.ZodType>>>(response: Response) {
  return { schema: { response } };
}

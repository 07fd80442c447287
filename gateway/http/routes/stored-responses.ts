// The Responses API's stored responses: read back and deleted by the caller who made them (a
// response of another user is as unknown as one never made: 404).
import type { FastifyInstance } from 'fastify';
import type { ResponseStore } from '../../../core/store/responses.ts';
import { callerOf } from '../auth.ts';
import { errors } from '../api-error.ts';

type IdParams = { Params: { id: string } };

export function registerStoredResponses(app: FastifyInstance, responses: ResponseStore): void {
  const notFound = (id: string) => errors.notFound(`Response with id '${id}' not found.`, 'response_id');

  app.get<IdParams>('/v1/responses/:id', async (request) => {
    const stored = await responses.get(callerOf(request).user.id, request.params.id);
    if (!stored) throw notFound(request.params.id);
    return stored.response;
  });

  app.delete<IdParams>('/v1/responses/:id', async (request) => {
    const { id } = request.params;
    if (!(await responses.delete(callerOf(request).user.id, id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  });
}

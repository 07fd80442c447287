// The Responses API's stored responses: read back and deleted by the caller who made them (a
// response of another user is as unknown as one never made: 404).
import { errors } from '../api/api-error.ts';
import type { SurfaceRequest, SurfaceServices } from './surface-request.ts';

const notFound = (id: string) => errors.notFound(`Response with id '${id}' not found.`, 'response_id');

export async function readStoredResponse(request: SurfaceRequest, services: SurfaceServices): Promise<object> {
  const id = request.params.id ?? '';
  const stored = await services.responses.get(request.caller.user.id, id);
  if (!stored) throw notFound(id);
  return stored.response;
}

export async function deleteStoredResponse(request: SurfaceRequest, services: SurfaceServices): Promise<object> {
  const id = request.params.id ?? '';
  if (!(await services.responses.delete(request.caller.user.id, id))) throw notFound(id);
  return { id, object: 'response', deleted: true };
}

// What GET /v1/models answers: the routers as OpenAI's model objects, with the spec's fields
// (type, aliases, max_context_length). The response schemas of the models routes and the source
// of the Playground's Model type (web/api.ts, type-only); zod alone is imported.
import { z } from 'zod';
import { listOf } from './lists.ts';

export const ModelView = z.strictObject({
  id: z.string(),
  object: z.literal('model'),
  created: z.number(),
  owned_by: z.string(),
  type: z.string(),
  aliases: z.array(z.string()),
  max_context_length: z.number(),
});
export type ModelView = z.output<typeof ModelView>;

export const ModelList = listOf(ModelView);
export type ModelList = z.output<typeof ModelList>;

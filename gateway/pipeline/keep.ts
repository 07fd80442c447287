// Keeping an answer (a stored response) before the caller gets its end: a store that fails loses
// the stored copy, never the answer.
import type { JsonObject } from '../wire/openai-wire.ts';
import type { Dialect } from '../dialects/dialect.ts';

export interface Keeping {
  /** Where a stored copy that could not be written is told of. */
  readonly log: { warn(fields: object, message: string): void };
}

export async function keep(dialect: Dialect, answer: JsonObject, to: Keeping): Promise<void> {
  try {
    await dialect.keep!(answer);
  } catch (error) {
    to.log.warn({ err: error }, 'the answer could not be stored; it was still sent');
  }
}

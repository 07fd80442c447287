// Turns a gateway error into one sentence a person can act on. The gateway's own message is
// always kept (it names the amounts, the limit or the field); the prefix says what happened.
import { ApiFailure } from './api.ts';

export function readable(error: unknown): string {
  if (!(error instanceof ApiFailure))
    return `Something went wrong in the Playground: ${error instanceof Error ? error.message : String(error)}`;
  const message = sentence(error.message);
  switch (error.code) {
    case 'insufficient_budget':
      return `Your budget is spent: ${message} Ask an admin to raise it, or wait for the next period.`;
    case 'model_not_found':
      return `That model does not exist: ${message} Pick another model.`;
    case 'invalid_api_key':
      return `Your API key was not accepted: ${message}`;
    case 'admin_required':
      return `This needs an admin key: ${message}`;
    case 'network_error':
      return `The gateway could not be reached. Check your connection and try again.`;
    case 'upstream_interrupted':
      return `The answer was cut short: ${message}`;
  }
  // The gateway's message already names the limit and when to retry (and so does Retry-After).
  if (error.status === 429) return `Too many requests. ${message}`;
  if (error.status === 404) return `Not found: ${message}`;
  if (error.status === 403) return `Not allowed: ${message}`;
  if (error.status === 409) return `Already taken: ${message}`;
  if (error.status >= 500) return `The gateway could not complete this: ${message}`;
  return `The gateway refused this: ${message}`;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

// The headers every answer carries besides the rate limits: which router was asked for and which
// served, and the budget left (budget-headers.ts).
import { putBudgetHeaders } from '../api/budget-headers.ts';
import type { Call } from './inference-call.ts';

export function routerHeaders(call: Call): Record<string, string> {
  const headers = { 'x-tollgate-requested-model': call.requested.spec.name, 'x-tollgate-served-model': call.router.spec.name };
  return putBudgetHeaders(headers, call.admitted.budget);
}

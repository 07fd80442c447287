// What can be wrong with a request body as it arrives, named once for the readers that find it
// (http/json-shape.ts, http/body-deadlines.ts) and the errors that tell the caller (api-error.ts).

/** A JSON body's shape past a bound, found before it is parsed. */
export type ShapeViolation =
  | { readonly kind: 'values'; readonly limit: number }
  | { readonly kind: 'depth'; readonly limit: number }
  | { readonly kind: 'keys'; readonly limit: number };

/** Which of a body's deadlines passed: the whole body's, or the one between two bytes. */
export type BodyExpiry = 'total' | 'idle';

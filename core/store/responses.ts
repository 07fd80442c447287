// Stored responses of the Responses API (`store: true`): the answer as it was given, and the
// conversation that led to it, in chat form, so `previous_response_id` can continue it. Kept per
// user for the usage retention; a user never reaches another's (the user is part of the key).
//
// Bounded three ways, in both stores: a stored response (its whole conversation) and a
// conversation's turns by the gateway before it forwards (the Responses dialect refuses past
// them), and a user's stored responses in all by the store, which lets the oldest go first.

export interface StoredResponse {
  /** The Response object as the caller got it. */
  readonly response: Readonly<Record<string, unknown>>;
  /** The conversation up to and including this response's output, as chat messages. */
  readonly messages: readonly Readonly<Record<string, unknown>>[];
  /** Responses in its chain, this one included: 1 for a response without previous_response_id. Absent in those stored before it was counted (read as 1). */
  readonly turns?: number;
}

/** A stored response as read back, with what it takes in the store. */
export interface ReadResponse extends StoredResponse {
  /** Its size as stored (its JSON's length). */
  readonly bytes: number;
}

/** What one user's stored responses may take in all: past it, the oldest are let go. */
export interface ResponseLimits {
  /** Bytes (JSON length) of all of a user's stored responses. */
  readonly bytesPerUser: number;
  /** How many stored responses one user keeps. */
  readonly countPerUser: number;
}

export const DEFAULT_RESPONSE_LIMITS: ResponseLimits = { bytesPerUser: 64 * 1024 * 1024, countPerUser: 10_000 };

export interface ResponseStore {
  /** Stores `json` (a StoredResponse, serialised once by the caller) for the retention, letting the user's oldest go past the limits. */
  put(userId: string, id: string, json: string): Promise<void>;
  /** Undefined when there is none (never stored, deleted, past retention, let go, or another user's). */
  get(userId: string, id: string): Promise<ReadResponse | undefined>;
  /** False when there was none. */
  delete(userId: string, id: string): Promise<boolean>;
}

/** A stored response's JSON read back; its size is the text's length. */
export function readResponse(json: string): ReadResponse {
  return { ...(JSON.parse(json) as StoredResponse), bytes: json.length };
}

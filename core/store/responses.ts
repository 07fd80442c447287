// Stored responses of the Responses API (`store: true`): the answer as it was given, and the
// conversation that led to it, in chat form, so `previous_response_id` can continue it. Kept per
// user for the usage retention; a user never reaches another's (the user is part of the key).

export interface StoredResponse {
  /** The Response object as the caller got it. */
  readonly response: Readonly<Record<string, unknown>>;
  /** The conversation up to and including this response's output, as chat messages. */
  readonly messages: readonly Readonly<Record<string, unknown>>[];
}

export interface ResponseStore {
  put(userId: string, id: string, stored: StoredResponse): Promise<void>;
  /** Undefined when there is none (never stored, deleted, past retention, or another user's). */
  get(userId: string, id: string): Promise<StoredResponse | undefined>;
  /** False when there was none. */
  delete(userId: string, id: string): Promise<boolean>;
}

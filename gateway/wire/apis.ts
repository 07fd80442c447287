// The APIs the gateway speaks, on either side: what a caller may call it in (each an entry of the
// surface table, pipeline/api-surfaces.ts) and what a backend may answer in (an adapter's
// `speaks`). A request and its answer are translated between the two by the pair's translator
// (gateway/translators/).

/** OpenAI's own endpoints (chat completions among them), Anthropic's Messages API, OpenAI's Responses API. */
export type Api = 'openai' | 'anthropic-messages' | 'openai-responses';

/** An API besides OpenAI's own endpoints, which a backend may speak natively: a request in it then passes through. */
export type NativeApi = Exclude<Api, 'openai'>;

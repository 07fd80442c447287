// The engines benchmark's workload (issue 28): many groups of chat requests, each group sharing
// one long system prompt (a few thousand tokens) and each request adding a short question of its
// own, arriving open-loop (Poisson) at a given rate. Everything comes from a seed, so that every
// contender at a rate receives the very same sequence of requests at the very same times: the
// figures then differ only by where the gateway sent them.

/** The gateway's router the workload asks for. */
export const MODEL = 'bench-engines';

/** What the load generator prints last. */
export interface EngineLoadSummary {
  /** Requests due in the window. */
  readonly due: number;
  /** Streams that ended with [DONE] in the window (whenever they were due). */
  readonly completed: number;
  /** Content chunks (one token each) received in the window. */
  readonly outputTokens: number;
  /** Requests that failed (any time), by reason. */
  readonly failures: Record<string, number>;
  /** Time to first token of the requests due in the window, ms, ascending; a request without one by the window's end counts as its wait so far. */
  readonly ttftMs: readonly number[];
  /** Of those, how many had no first token by the window's end. */
  readonly ttftCensored: number;
  readonly seconds: number;
}

/** The shape of the workload, the same for every rate and contender of a run. */
export interface WorkloadShape {
  readonly seed: number;
  /** Distinct system prompts (groups of requests). */
  readonly groups: number;
  /** Words in each system prompt (about one o200k token each, so about as many tokens). */
  readonly systemWords: number;
  /** Completion length of every request (`max_tokens`). */
  readonly maxTokens: number;
}

/** One request of the sequence: when it is due (ms from the start) and what it asks. */
export interface Arrival {
  readonly atMs: number;
  readonly group: number;
  readonly question: number;
}

/**
 * Common short English words: each is one token in o200k (and in Llama's tokenizer), so a
 * prompt of N words is about N tokens, as real prose is about 1.3 tokens a word.
 */
const VOCABULARY = (
  'the of and to in is was for on that with as by at from it an be this which or are have not but had they were has ' +
  'their been one all there would we more when can who will no if so out up about into than them some time only other ' +
  'new its these two may first also any after what over where such most me now our very made through back many well ' +
  'even because people much way how get work life world year good state system data model engine cache answer user ' +
  'request policy account order price team support service report review check rule step case note list'
).split(' ');

/** mulberry32: a small seeded generator, identical on every run and in every process. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The system prompt of `group`: a header naming it (so no two groups share a first block), then words. */
export function systemPrompt(shape: WorkloadShape, group: number): string {
  const random = seededRandom(shape.seed * 7919 + group + 1);
  const words: string[] = [`You are assistant number ${group} of the benchmark. Follow these instructions:`];
  for (let i = 0; i < shape.systemWords; i++) words.push(VOCABULARY[Math.floor(random() * VOCABULARY.length)]!);
  return words.join(' ');
}

/**
 * The arrivals of a run at `ratePerSecond` over `seconds`: Poisson (exponential gaps), each to a
 * group drawn uniformly, each with a question of its own (its index in the sequence).
 */
export function arrivals(shape: WorkloadShape, ratePerSecond: number, seconds: number): Arrival[] {
  const random = seededRandom(Math.imul(shape.seed, 0x9e3779b1) + Math.round(ratePerSecond * 1000));
  const out: Arrival[] = [];
  let at = 0;
  for (let i = 0; ; i++) {
    at += (-Math.log(1 - random()) / ratePerSecond) * 1000;
    if (at >= seconds * 1000) return out;
    out.push({ atMs: at, group: Math.floor(random() * shape.groups), question: i });
  }
}

/** The streamed chat request of an arrival, for `model` (the gateway's router). */
export function requestBody(shape: WorkloadShape, prompts: readonly string[], model: string, arrival: Arrival): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: prompts[arrival.group] },
      { role: 'user', content: `Question ${arrival.question}: in two sentences, what does rule ${arrival.question % 97} say?` },
    ],
    max_tokens: shape.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  });
}

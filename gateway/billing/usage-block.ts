// The `usage` block every answer carries (spec 2.5): tokens, cost and carbon.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { JsonObject, TokenUsage } from '../wire/openai-wire.ts';
import type { ProviderRoute, RouterRoute } from '../routing/routing-table.ts';
import { estimateCarbon, NO_CARBON } from '../metering/carbon.ts';
import type { PromptTokensDetails, UsageBlock } from '../api/usage-shape.ts';
import { costMicros, microsToNumber, type PromptCache } from '../metering/cost.ts';
import { maxCompletionTokens, plausiblePromptTokens, secondsToMs } from './worst-case.ts';
import { transcriptTokenBound } from '../endpoints/audio-file.ts';
import { TokenCount, type TokenSink } from '../metering/tokens.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';

export type { UsageBlock };

export interface Usage {
  readonly block: UsageBlock;
  readonly costMicros: bigint;
  /** What in the backend's report (or the gateway's count) was not believed, comma-separated (null: nothing). */
  readonly anomaly: string | null;
  /** The prompt tokens the backend reported, when it reported a non-negative integer (believed or not; not of an all-zero report, usage_zero). */
  readonly reportedPrompt: number | undefined;
  /** Of the prompt tokens charged, those charged as read from and written to the backend's prompt cache (0 when none was believed). */
  readonly cache: PromptCache;
}

/** What admission counted of the prompt, for the bounds usage is held to. */
export interface PromptCounts {
  /** The gateway's count (OpenAI's accounting), or its upper bound (tokens.ts); undefined when admission counted nothing. */
  readonly promptTokens: number | undefined;
  /** A lower bound of that count (the count itself when exact): what the completion's room is left by. */
  readonly fewestPrompt: number | undefined;
  /** The count with the template overhead (worst-case.ts). */
  readonly promptBase: number | undefined;
  /** The prompt tokens the hold covers. */
  readonly heldPrompt: number | undefined;
}

export interface UsageInputs {
  readonly router: RouterRoute;
  readonly provider: ProviderRoute;
  readonly endpoint: Endpoint;
  /** The backend's own counts, when it gave any (undefined for a stream cut short). */
  readonly reported: TokenUsage | undefined;
  /** The request body, as its endpoint's schema parsed it. */
  readonly request: JsonObject;
  /** What admission counted of the prompt. */
  readonly counts: PromptCounts;
  /** The completion's tokens as the gateway counts them (countTextTokens of its text), asked for only when needed. */
  readonly completionTokens: () => number;
  readonly latencySeconds: number;
  /** Transcriptions: the audio's length as the backend reported it (verbose_json's `duration`, or `usage.seconds`), not yet checked. */
  readonly reportedSeconds?: unknown;
}

/**
 * Builds the usage block from the backend's token counts, or counts them when it gave none.
 * Reported counts must be non-negative integers, the completion no more than the request allows
 * (max_tokens x n, or the router's allowance) and the prompt no more than is plausible
 * (worst-case.ts); what is not is replaced by the gateway's count or cut to the bound, and
 * named in `anomaly`. Of chat and completions, whose answer the gateway can count, a report
 * without a completion count, with 0 of it for an answer with text, or all zero for one (both
 * counts then the gateway's), is not believed either: no answer with text goes uncharged. The
 * gateway's own completion count is cut to the bound too (another tokenizer can count more than
 * the backend generated). So no request costs more than it could.
 * A transcription is charged for its audio's length (the backend's report, no more than the
 * file's header says) and for the tokens the backend reports, none when it reports none.
 */
export function usageFor(inputs: UsageInputs): Usage {
  const { router, provider, endpoint, reported, request, counts, completionTokens, latencySeconds } = inputs;
  const anomalies: string[] = [];
  const audio = ENDPOINT_SPECS[endpoint].audio?.(request);
  const seconds = audio && billedSeconds(audio.seconds, inputs.reportedSeconds, anomalies);
  const promptLimit = plausiblePromptTokens(router, endpoint, counts.promptBase, counts.heldPrompt);
  const completionLimit =
    seconds === undefined
      ? maxCompletionTokens(router, endpoint, request, counts.fewestPrompt ?? counts.promptTokens)
      : transcriptTokenBound(Math.max(seconds, audio?.seconds ?? 0));
  const counted = () => (audio ? 0 : (counts.promptTokens ?? countPromptTokens(endpoint, request)));
  // Chat and completions: the gateway can count the answer's text, so a report that leaves the
  // completion out, or says 0 of an answer with text, is not believed (distrustedCompletion).
  const countsAnswer = generates(endpoint) && !audio;
  let produced: number | undefined;
  const answerTokens = () => (produced ??= countsAnswer ? completionTokens() : 0);
  // Only total_tokens says nothing of how a generated answer splits: as if no usage came.
  const report = reported?.totalOnly && countsAnswer ? undefined : reported;
  // All zero (a prompt of 0, a completion of 0 or none) for an answer with text: neither count is believed.
  const allZero = countsAnswer && report?.prompt_tokens === 0 && (report.completion_tokens ?? 0) === 0 && answerTokens() > 0;
  let prompt: number;
  let reportedPrompt: number | undefined;
  if (report === undefined) prompt = counted();
  else if (allZero) {
    anomalies.push('usage_zero');
    prompt = counted();
  } else if (!isTokenCount(report.prompt_tokens)) {
    anomalies.push('prompt_invalid');
    prompt = counted();
  } else {
    reportedPrompt = report.prompt_tokens;
    prompt = reportedPrompt;
  }
  if (prompt > promptLimit) {
    anomalies.push(reportedPrompt === prompt ? 'prompt_over_limit' : 'prompt_count_over_limit');
    prompt = promptLimit;
  }
  const completionAnomaly =
    report === undefined || allZero ? undefined : distrustedCompletion(report.completion_tokens, countsAnswer, request, answerTokens);
  if (completionAnomaly) anomalies.push(completionAnomaly);
  const believed = report !== undefined && !allZero && completionAnomaly === undefined ? (report.completion_tokens as number) : undefined;
  let completion = believed ?? answerTokens();
  if (completion > completionLimit) {
    anomalies.push(believed !== undefined ? 'completion_over_limit' : 'completion_count_over_limit');
    completion = completionLimit;
  }
  const { cache, refused } = report === undefined || allZero ? BELIEVED_NONE : believedCache(report, prompt, anomalies);
  const micros = costMicros(router.prices, prompt, completion, seconds === undefined ? 0 : secondsToMs(seconds), cache);
  // Embeddings and reranking are not modelled by the carbon method: they report 0. Of a
  // transcription, the text decoded (its reported completion tokens) is; its audio is not.
  const carbon = generates(endpoint) ? estimateCarbon(provider.carbon, completion, latencySeconds) : NO_CARBON;
  const block: UsageBlock = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    // A report not believed says 0, whole or streamed alike: the answer shows no saving that was not charged.
    ...((refused || cache.cached + cache.writes > 0) && { prompt_tokens_details: promptDetails(cache) }),
    cost: microsToNumber(micros),
    carbon,
  };
  if (seconds !== undefined) block.seconds = secondsToMs(seconds) / 1000;
  return { block, costMicros: micros, anomaly: anomalies.length === 0 ? null : anomalies.join(','), reportedPrompt, cache };
}

const NO_CACHE: PromptCache = Object.freeze({ cached: 0, writes: 0 });

/** The prompt cache as charged, and whether a report of it was not believed. */
interface CacheCharged {
  readonly cache: PromptCache;
  readonly refused: boolean;
}

const BELIEVED_NONE: CacheCharged = Object.freeze({ cache: NO_CACHE, refused: false });
const REFUSED: CacheCharged = Object.freeze({ cache: NO_CACHE, refused: true });

/**
 * The prompt cache's reads and writes as reported, when they are believable: non-negative
 * integers (absent: 0) whose sum is no more than the prompt tokens charged, since cached tokens
 * are counted inside the prompt. Otherwise none is believed (the prompt is all charged as
 * uncached, never more than without the report) and the anomaly named.
 */
function believedCache(report: TokenUsage, prompt: number, anomalies: string[]): CacheCharged {
  const { cached_tokens: cached = 0, cache_write_tokens: writes = 0 } = report;
  if (!isTokenCount(cached) || !isTokenCount(writes)) {
    anomalies.push('cached_invalid');
    return REFUSED;
  }
  if (cached + writes > prompt) {
    anomalies.push('cached_over_limit');
    return REFUSED;
  }
  return cached + writes === 0 ? BELIEVED_NONE : { cache: { cached, writes }, refused: false };
}

/** The block's prompt_tokens_details: cache writes only when there were some (only Anthropic reports them). */
function promptDetails(cache: PromptCache): PromptTokensDetails {
  return cache.writes > 0 ? { cached_tokens: cache.cached, cache_write_tokens: cache.writes } : { cached_tokens: cache.cached };
}

/** Seconds of audio a backend may report past the file's header before the report is not believed. */
const AUDIO_SLACK_SECONDS = 1;

/**
 * The seconds a transcription is charged for: the backend's report when it gives a plausible one
 * (no more than the file's header says, give or take a second of rounding), else the header's.
 */
function billedSeconds(fileSeconds: number | undefined, reported: unknown, anomalies: string[]): number {
  if (reported === undefined || reported === null) return fileSeconds ?? 0;
  if (typeof reported !== 'number' || !Number.isFinite(reported) || reported < 0) {
    anomalies.push('audio_invalid');
    return fileSeconds ?? 0;
  }
  if (fileSeconds !== undefined && reported > fileSeconds + AUDIO_SLACK_SECONDS) {
    anomalies.push('audio_over_limit');
    return fileSeconds;
  }
  return reported;
}

/**
 * Why a reported completion count is not believed, if it is not: not a count; or, where the
 * gateway counts the answer (`countsAnswer`: chat and completions), none given, or 0 for an answer
 * with text (unless that text is the prompt sent back, `echo`). Embeddings and reranking report
 * none, and a transcription's completion is charged only as reported: none is 0 there.
 */
function distrustedCompletion(value: unknown, countsAnswer: boolean, request: JsonObject, answerTokens: () => number): string | undefined {
  if (value === undefined || value === null) return countsAnswer ? 'completion_missing' : undefined;
  if (!isTokenCount(value)) return 'completion_invalid';
  if (value === 0 && countsAnswer && request.echo !== true && answerTokens() > 0) return 'completion_zero';
  return undefined;
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function generates(endpoint: Endpoint): boolean {
  return ENDPOINT_SPECS[endpoint].generates;
}

/** The prompt's tokens: exact, or an upper bound past what one count may do (tokens.ts). */
export function countPromptTokens(endpoint: Endpoint, request: JsonObject): number {
  return promptTokenCount(endpoint, request, new TokenCount()).tokens;
}

/** Reports the prompt's texts and the tokens known without counting text to `count`. */
export function promptTokenCount<Sink extends TokenSink>(endpoint: Endpoint, request: JsonObject, count: Sink): Sink {
  return ENDPOINT_SPECS[endpoint].countPrompt(request, count);
}

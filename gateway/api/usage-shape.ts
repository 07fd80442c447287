// The gateway's usage block, as every answer carries it in `usage` (spec: tokens, cost from the
// router's prices, the carbon estimate): its shape only. billing/usage-block.ts computes it; the
// translators (gateway/translators/) write it into each API's answer.
import type { CarbonEstimate } from '../metering/carbon.ts';

export interface UsageBlock {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /**
   * Of prompt_tokens, those the backend served from its prompt cache (and, of Anthropic, wrote
   * to it) as charged: present only when the backend reported some, so an answer without them is
   * as it always was.
   */
  prompt_tokens_details?: PromptTokensDetails;
  cost: number;
  carbon: CarbonEstimate;
  /** Transcriptions: the seconds of audio charged for. */
  seconds?: number;
}

/** OpenAI's `prompt_tokens_details`, the gateway's part of it: cache writes are Anthropic's, present only when some were charged. */
export interface PromptTokensDetails {
  cached_tokens: number;
  cache_write_tokens?: number;
}

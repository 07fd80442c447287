// The gateway's usage block, as every answer carries it in `usage` (spec: tokens, cost from the
// router's prices, the carbon estimate): its shape only. billing/usage-block.ts computes it; the
// translators (gateway/translators/) write it into each API's answer.
import type { CarbonEstimate } from '../metering/carbon.ts';

export interface UsageBlock {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  carbon: CarbonEstimate;
  /** Transcriptions: the seconds of audio charged for. */
  seconds?: number;
}

// The vLLM emulator's parameters, parsed once by one schema. Each default is the real figure it
// stands for: Llama 3.1 8B Instruct in bf16 served by vLLM on one H100 80 GB (the README's table
// says where each comes from), so an emulator started without settings behaves, at time_scale 1,
// about as fast and as large as that server. Tests and the bench shrink the cache and the clock.
import { z } from 'zod';

export const settingsSchema = z
  .strictObject({
    model: z.string().min(1).default('meta-llama/Llama-3.1-8B-Instruct').describe('The served model name (--served-model-name).'),
    kv_blocks: z
      .number()
      .int()
      .positive()
      .default(28_000)
      .describe('KV-cache blocks (--num-gpu-blocks-override); 28,000 x 16 = 448k tokens, what vLLM finds for an 8B model on an H100.'),
    block_size: z.number().int().positive().max(1024).default(16).describe('Tokens a KV block holds (--block-size, 16 by default).'),
    max_num_seqs: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe('The most requests in the running batch (--max-num-seqs; 256, the long-standing default).'),
    max_model_len: z
      .number()
      .int()
      .positive()
      .default(8192)
      .describe('The longest prompt plus completion in tokens (--max-model-len); longer requests get a 400.'),
    prefill_tps: z
      .number()
      .positive()
      .default(15_000)
      .describe('Prompt tokens computed per second, the whole engine (an 8B model prefills about 15k tokens/s on an H100).'),
    decode_tps: z
      .number()
      .positive()
      .default(120)
      .describe('Tokens per second one sequence decodes when it runs alone (about 120 for an 8B model on an H100, memory-bound).'),
    batch_slowdown: z
      .number()
      .min(0)
      .default(0.02)
      .describe('Per-sequence decode rate is decode_tps / (1 + batch_slowdown x (running - 1)): 53 tokens/s each at 64 running.'),
    default_max_tokens: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe('Completion length when the request sets no max_tokens (vLLM would allow the rest of the context; an emulator choice).'),
    scheduling_policy: z
      .enum(['fcfs', 'priority'])
      .default('fcfs')
      .describe("Waiting order (--scheduling-policy): 'fcfs', or 'priority' (lower `priority` first, then arrival)."),
    prompt_tokens_details: z
      .boolean()
      .default(false)
      .describe('Report usage.prompt_tokens_details.cached_tokens (--enable-prompt-tokens-details).'),
    legacy_metric_names: z
      .boolean()
      .default(false)
      .describe('Expose vllm:gpu_cache_usage_perc instead of vllm:kv_cache_usage_perc, as vLLM before 0.10 did.'),
    time_scale: z
      .number()
      .positive()
      .max(1000)
      .default(1)
      .describe('Multiplies every emulated duration: at 0.01 a 2 s prefill takes 20 ms of wall time.'),
    min_step_ms: z
      .number()
      .min(0)
      .max(1000)
      .default(5)
      .describe('Wall-clock floor between two engine steps that only stream tokens: bounds the CPU a fast clock costs.'),
  })
  .refine((settings) => settings.kv_blocks * settings.block_size >= settings.max_model_len, {
    // vLLM refuses to start when the cache cannot hold one request of max_model_len; here it
    // also guarantees that every admissible request fits once the cache is empty (no request waits forever).
    message: 'kv_blocks x block_size must hold at least max_model_len tokens',
    path: ['kv_blocks'],
  });

export type EmulatorSettings = z.infer<typeof settingsSchema>;
export type EmulatorSettingsInput = z.input<typeof settingsSchema>;

/** Parses settings; a bad one throws zod's error naming the field. */
export function parseSettings(input: EmulatorSettingsInput = {}): EmulatorSettings {
  return Object.freeze(settingsSchema.parse(input));
}

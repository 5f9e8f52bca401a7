/**
 * Built-in prices for well-known models: the defaults of the ModelRatio, CompletionRatio,
 * CacheRatio, CreateCacheRatio, ImageRatio, AudioRatio, AudioCompletionRatio and ModelPrice options.
 *
 * Prices are written as the vendors publish them (USD per 1M tokens) and turned into ratios here,
 * so a reader can check them against a price page: ratio 1 = $2 per 1M input tokens
 * (500,000 quota = $1), completion ratio = output / input, cache ratio = cache read / input,
 * create-cache ratio = cache write / input. Admins override any of them through the options.
 */
interface TokenPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Image input tokens (gpt-image-1). */
  imageInput?: number;
  /** Audio tokens (gpt-4o audio and realtime models). */
  audioInput?: number;
  audioOutput?: number;
}

/** Claude: cache reads cost 0.1x input, 5-minute cache writes 1.25x input. */
const claude = (input: number, output: number): TokenPrice => ({
  input,
  output,
  cacheRead: input * 0.1,
  cacheWrite: input * 1.25,
});

const TOKEN_PRICES: Readonly<Record<string, TokenPrice>> = {
  // OpenAI chat and reasoning
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'gpt-4': { input: 30, output: 60 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-2024-05-13': { input: 5, output: 15 },
  'gpt-4o-2024-08-06': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-2024-11-20': { input: 2.5, output: 10, cacheRead: 1.25 },
  'chatgpt-4o-latest': { input: 5, output: 15 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  o1: { input: 15, output: 60, cacheRead: 7.5 },
  'o1-mini': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-4o-audio-preview': { input: 2.5, output: 10, audioInput: 40, audioOutput: 80 },
  'gpt-4o-realtime-preview': { input: 5, output: 20, cacheRead: 2.5, audioInput: 40, audioOutput: 80 },
  'gpt-image-1': { input: 5, output: 40, cacheRead: 1.25, imageInput: 10 },
  // OpenAI embeddings and moderation (output is not billed: completion ratio 1)
  'text-embedding-3-small': { input: 0.02, output: 0.02 },
  'text-embedding-3-large': { input: 0.13, output: 0.13 },
  'text-embedding-ada-002': { input: 0.1, output: 0.1 },
  'omni-moderation-latest': { input: 0, output: 0 },
  'text-moderation-stable': { input: 0, output: 0 },
  // Speech: tts-1 is $15 per 1M characters, counted as tokens. Transcription is $0.006 per minute
  // and the relay counts 1,000 tokens per started minute, i.e. $6 per 1M "tokens".
  'tts-1': { input: 15, output: 15 },
  'tts-1-hd': { input: 30, output: 30 },
  'whisper-1': { input: 6, output: 6 },
  // Anthropic
  'claude-3-haiku-20240307': claude(0.25, 1.25),
  'claude-3-opus-20240229': claude(15, 75),
  'claude-3-5-haiku-20241022': claude(0.8, 4),
  'claude-3-5-sonnet-20240620': claude(3, 15),
  'claude-3-5-sonnet-20241022': claude(3, 15),
  'claude-3-7-sonnet-20250219': claude(3, 15),
  'claude-sonnet-4-20250514': claude(3, 15),
  'claude-opus-4-20250514': claude(15, 75),
  'claude-opus-4-1-20250805': claude(15, 75),
  'claude-sonnet-4-5-20250929': claude(3, 15),
  'claude-haiku-4-5-20251001': claude(1, 5),
  'claude-opus-4-5-20251101': claude(5, 25),
  // Google (prices for prompts up to 200k tokens)
  'gemini-1.5-pro': { input: 1.25, output: 5 },
  'gemini-1.5-flash': { input: 0.075, output: 0.3 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cacheRead: 0.03 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cacheRead: 0.01 },
  // DeepSeek (V3.2 prices; cache hits at one tenth)
  'deepseek-chat': { input: 0.28, output: 0.42, cacheRead: 0.028 },
  'deepseek-reasoner': { input: 0.28, output: 0.42, cacheRead: 0.028 },
};

/** USD per call; a model listed here is billed per call and its ratios are ignored. */
export const DEFAULT_MODEL_PRICE: Readonly<Record<string, number>> = {
  'dall-e-2': 0.02,
  'dall-e-3': 0.04,
  // Midjourney actions (model names mj_<action>)
  mj_imagine: 0.1,
  mj_variation: 0.1,
  mj_reroll: 0.1,
  mj_blend: 0.1,
  mj_modal: 0.1,
  mj_zoom: 0.1,
  mj_shorten: 0.1,
  mj_high_variation: 0.1,
  mj_low_variation: 0.1,
  mj_pan: 0.1,
  mj_edits: 0.1,
  mj_inpaint: 0,
  mj_custom_zoom: 0,
  mj_describe: 0.05,
  mj_upscale: 0.05,
  mj_upload: 0.05,
  swap_face: 0.05,
  mj_video: 0.8,
  // Suno
  suno_music: 0.1,
  suno_lyrics: 0.01,
  // Video
  'sora-2': 0.3,
  'sora-2-pro': 0.5,
  'veo-3.0-generate-001': 0.4,
};

/** Six decimals: enough for any price, and it hides binary noise such as 0.49999999999999994. */
const round = (value: number): number => Number(value.toFixed(6));

function ratios(pick: (price: TokenPrice) => number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [model, price] of Object.entries(TOKEN_PRICES)) {
    const value = pick(price);
    if (value !== undefined) out[model] = round(value);
  }
  return out;
}

const relative = (part: number | undefined, whole: number) =>
  part === undefined ? undefined : whole === 0 ? 1 : part / whole;

export const DEFAULT_MODEL_RATIO = ratios((p) => p.input / 2);
export const DEFAULT_COMPLETION_RATIO = ratios((p) => relative(p.output, p.input));
export const DEFAULT_CACHE_RATIO = ratios((p) => relative(p.cacheRead, p.input));
export const DEFAULT_CREATE_CACHE_RATIO = ratios((p) => relative(p.cacheWrite, p.input));
export const DEFAULT_IMAGE_RATIO = ratios((p) => relative(p.imageInput, p.input));
export const DEFAULT_AUDIO_RATIO = ratios((p) => relative(p.audioInput, p.input));
export const DEFAULT_AUDIO_COMPLETION_RATIO = ratios((p) =>
  p.audioInput === undefined ? undefined : relative(p.audioOutput, p.audioInput),
);

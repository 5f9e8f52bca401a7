/** Billing (DESIGN.md §3, reference §5): prices, token estimates and quota arithmetic. Pure functions. */
export { BILLING_OPENAI_CODES, billingErrors } from './errors.ts';
export {
  CHAT_REPLY_PRIMER_TOKENS,
  CHAT_TOKENS_PER_MESSAGE,
  CHAT_TOKENS_PER_NAME,
  CHAT_TOKENS_PER_TOOL,
  countPromptTexts,
  estimateChatPromptTokens,
  estimateClaudePromptTokens,
  estimateCompletionTokens,
  estimateGeminiEmbedTokens,
  estimateGeminiPromptTokens,
  estimateInputTokens,
  estimatePromptTokens,
  estimateResponsesPromptTokens,
  type PromptTexts,
  promptLength,
  promptTexts,
  requestedMaxTokens,
  TOKENS_PER_AUDIO_MINUTE,
  TOKENS_PER_TOOL_CALL,
  transcriptionTokens,
} from './estimate.ts';
export { imagePriceMultiplier } from './image-price.ts';
export { type ImageRef, imageTokens, isOpenAITextModel } from './media.ts';
export type { BillingOptions } from './options.ts';
export {
  CACHE_CREATION_1H_MULTIPLIER,
  COMPACTION_PRICE_SUFFIX,
  compactionPriceModel,
  DEFAULT_CACHE_CREATION_RATIO,
  DEFAULT_UNSET_MODEL_RATIO,
  type ResolvePriceInput,
  resolveGroupRatio,
  resolvePrice,
} from './price.ts';
export {
  ceilExact,
  isFreePrice,
  type PreConsumeInput,
  preConsumeQuota,
  quotaToUsd,
  type SettleInput,
  type Settlement,
  settleQuota,
  type ToolSurcharges,
  taskCallQuota,
  taskTokenQuota,
  type UsageSemantics,
} from './quota.ts';
export {
  type ExprRequest,
  estimatedTokens,
  priceByExpression,
  requestField,
  TIERED_MODE,
  type TieredTrace,
  tieredExpressionFor,
  usageTokens,
} from './tiered.ts';
export { countTextTokens, type EncodingName, encodingFor } from './tokenizer.ts';
export { type PaidTool, toolPriceUsd } from './tool-price.ts';

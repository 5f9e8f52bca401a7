/**
 * Ranges of the numbers and names of a relay request that billing and routing use (issue 18): refused
 * with a 400 and a stable code before anything is reserved, so that no value of 1e308, -1 or 10.5
 * reaches the arithmetic of a reservation or a bill.
 */
import { AppError } from '../../errors.ts';
import type { RelayRequest } from '../pipeline.ts';
import type { WireFormat } from '../types.ts';
import { BOUND_ERRORS } from './errors.ts';

/**
 * The largest completion budget taken (max_tokens and its kin): upstreams read it as a 32-bit integer,
 * and Tollgate knows no model's own output limit (each upstream refuses what exceeds its model's).
 */
export const MAX_TOKENS_LIMIT = 2 ** 31 - 1;
/** Longest model name taken (real ones, with a provider path, stay under 100 characters). */
export const MODEL_NAME_LIMIT = 256;
/** Images one request may ask for, by model: OpenAI's limits (DALL·E 3 makes one at a time). */
const IMAGE_LIMITS: Readonly<Record<string, number>> = { 'dall-e-3': 1 };
const DEFAULT_IMAGE_LIMIT = 10;

/** Whether `text` holds a C0 control (NUL included) or DEL: never part of a name, and NUL breaks Postgres text. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit === 0x7f) return true;
  }
  return false;
}

type Json = Record<string, unknown>;

/** Throws the refusal of the first value of `input` outside its range. */
export function assertRequestBounds(input: RelayRequest): void {
  assertModelName(input.model);
  const body = input.body;
  if (body instanceof FormData) {
    if (input.format === 'openai-image-edits') assertImageCount(input.model, formNumber(body.get('n')));
    return;
  }
  for (const [field, value] of completionBudgets(input.format, body)) assertMaxTokens(field, value);
  if (input.format === 'openai-images') assertImageCount(input.model, body.n);
}

/** Throws `invalid_text` for a model name that is empty, holds control characters or a lone surrogate, or is too long. */
export function assertModelName(model: string): void {
  if (model.length === 0 || model.length > MODEL_NAME_LIMIT || hasControl(model) || !model.isWellFormed()) {
    throw new AppError(BOUND_ERRORS.invalid_text, { field: 'model', limit: MODEL_NAME_LIMIT });
  }
}

/** The most images `model` makes in one request. */
export function imageLimit(model: string): number {
  return IMAGE_LIMITS[model] ?? DEFAULT_IMAGE_LIMIT;
}

/** The completion-budget fields a request of `format` may set, with their values. */
function completionBudgets(format: WireFormat, body: Json): Array<[string, unknown]> {
  switch (format) {
    case 'openai-chat':
      return [
        ['max_tokens', body.max_tokens],
        ['max_completion_tokens', body.max_completion_tokens],
      ];
    case 'openai-completions':
    case 'claude-messages':
      return [['max_tokens', body.max_tokens]];
    case 'openai-responses':
    case 'openai-responses-compact':
      return [['max_output_tokens', body.max_output_tokens]];
    case 'gemini-generate': {
      const config = body.generationConfig ?? body.generation_config;
      if (typeof config !== 'object' || config === null) return [];
      const c = config as Json;
      return [
        ['maxOutputTokens', c.maxOutputTokens],
        ['max_output_tokens', c.max_output_tokens],
      ];
    }
    default:
      return [];
  }
}

/** Unset (absent or null), or a whole number from 0 to MAX_TOKENS_LIMIT. */
function assertMaxTokens(field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_TOKENS_LIMIT) {
    throw new AppError(BOUND_ERRORS.max_tokens_out_of_range, { field, limit: MAX_TOKENS_LIMIT });
  }
}

/** Unset (absent or null: one image), or a whole number from 1 to the model's limit. */
function assertImageCount(model: string, n: unknown): void {
  if (n === undefined || n === null) return;
  const limit = imageLimit(model);
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > limit) {
    throw new AppError(BOUND_ERRORS.image_count_out_of_range, { model: model.slice(0, MODEL_NAME_LIMIT), limit });
  }
}

/** A form field as a number: absent stays absent, digits are their value, anything else is NaN (refused). */
function formNumber(value: string | File | null): number | undefined {
  if (value === null) return undefined;
  return typeof value === 'string' && /^\s*\d{1,10}\s*$/.test(value) ? Number(value) : Number.NaN;
}

import type { Json } from '../../convert/types.ts';
import type { WireFormat } from '../../types.ts';
import type { ProviderContext } from '../types.ts';

/** The harm categories the Gemini API takes safety settings for. */
export const HARM_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
] as const;

const CIVIC = 'HARM_CATEGORY_CIVIC_INTEGRITY';

/** Thinking budgets above this are ignored (2.5 Flash's largest; the model then decides). */
export const MAX_THINKING_BUDGET = 24576;

/** Google's documented stand-in signature for function calls the model did not produce itself. */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Finishes a body in Gemini's format: no `model` (it is in the URL), the administrator's safety
 * settings, thinking from a model suffix, image output for image models, and the repairs foreign
 * histories need (thought signatures on function calls, no ids on function responses).
 */
export function prepareGeminiBody(
  format: WireFormat,
  input: Json,
  context: Pick<ProviderContext, 'upstreamModel' | 'options'>,
): { body: Json; upstreamModel: string } {
  const { model: _model, ...body } = input;
  let upstreamModel = context.upstreamModel.replace(/^models\//, '');
  const { options } = context;
  if (format === 'gemini-embed') {
    // Each request of a batch must name the model of the URL.
    if (Array.isArray(body.requests)) {
      body.requests = body.requests.map((request: unknown) =>
        isObject(request) ? { ...request, model: `models/${upstreamModel}` } : request,
      );
    }
    return { body, upstreamModel };
  }
  if (format !== 'gemini-generate') return { body, upstreamModel };
  // The fields changed below under their camelCase names, so that no body carries both spellings.
  for (const [snake, camel] of [
    ['generation_config', 'generationConfig'],
    ['safety_settings', 'safetySettings'],
  ] as const) {
    if (body[snake] !== undefined && body[camel] === undefined) body[camel] = body[snake];
    delete body[snake];
  }

  if (option(() => options.getBoolean('gemini.thinking_adapter_enabled'), false)) {
    const thinking = thinkingFromSuffix(upstreamModel);
    if (thinking) {
      upstreamModel = thinking.model;
      const config: Json = { ...(isObject(body.generationConfig) ? body.generationConfig : {}) };
      const given = config.thinkingConfig ?? config.thinking_config;
      delete config.thinking_config;
      const thinkingConfig: Json = { ...(isObject(given) ? given : {}) };
      if (thinking.budget === 0) {
        thinkingConfig.thinkingBudget = 0;
        delete thinkingConfig.includeThoughts;
      } else {
        thinkingConfig.includeThoughts = true;
        const maxOutput = config.maxOutputTokens ?? config.max_output_tokens;
        let budget = thinking.budget;
        if (budget === undefined && typeof maxOutput === 'number' && maxOutput > 0) {
          const percentage = option(() => options.getNumber('gemini.thinking_adapter_budget_tokens_percentage'), 0.6);
          budget = Math.floor(maxOutput * percentage);
        }
        // Unknown output limit: the model decides (-1). A budget above the cap is ignored.
        if (budget === undefined) thinkingConfig.thinkingBudget = -1;
        else if (budget <= MAX_THINKING_BUDGET) thinkingConfig.thinkingBudget = budget;
      }
      config.thinkingConfig = thinkingConfig;
      body.generationConfig = config;
    }
  }

  const imageModels = option(() => options.getJson<unknown>('gemini.supported_imagine_models'), []);
  if (Array.isArray(imageModels) && imageModels.includes(upstreamModel)) {
    const config: Json = { ...(isObject(body.generationConfig) ? body.generationConfig : {}) };
    if (config.responseModalities === undefined) {
      config.responseModalities = ['TEXT', 'IMAGE'];
      body.generationConfig = config;
    }
  }

  if (!Array.isArray(body.safetySettings) || body.safetySettings.length === 0) {
    body.safetySettings = safetySettings(
      option(() => options.getJson<unknown>('gemini.safety_settings'), {}),
      upstreamModel,
    );
  }

  if (Array.isArray(body.contents)) {
    const signatures = option(() => options.getBoolean('gemini.function_call_thought_signature_enabled'), true);
    const dropIds = option(() => options.getBoolean('gemini.remove_function_response_id_enabled'), true);
    if (signatures || dropIds) body.contents = body.contents.map((c: unknown) => repairContent(c, signatures, dropIds));
  }
  return { body, upstreamModel };
}

/**
 * The model suffixes of the thinking adapter: `-thinking` (budget from maxOutputTokens), `-thinking-<N>`
 * (budget N), `-nothinking` (budget 0). Undefined when the model has none.
 */
export function thinkingFromSuffix(model: string): { model: string; budget?: number } | undefined {
  const numbered = /^(.+)-thinking-(\d+)$/.exec(model);
  if (numbered) return { model: numbered[1]!, budget: Number(numbered[2]) };
  if (model.endsWith('-nothinking')) return { model: model.slice(0, -'-nothinking'.length), budget: 0 };
  if (model.endsWith('-thinking')) return { model: model.slice(0, -'-thinking'.length) };
  return undefined;
}

/**
 * One setting per harm category. `gemini.safety_settings` maps a category, a model or "default" to a
 * threshold (category first, then model, then default); civic integrity takes BLOCK_NONE where the
 * others would be OFF.
 */
export function safetySettings(settings: unknown, model: string): Json[] {
  const map = isObject(settings) ? settings : {};
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const fallback = text(map[model]) ?? text(map.default) ?? 'OFF';
  return HARM_CATEGORIES.map((category) => {
    const own = text(map[category]);
    const threshold = own ?? (category === CIVIC && fallback === 'OFF' ? 'BLOCK_NONE' : fallback);
    return { category, threshold };
  });
}

function repairContent(content: unknown, signatures: boolean, dropIds: boolean): unknown {
  if (!isObject(content) || !Array.isArray(content.parts)) return content;
  let parts = content.parts as unknown[];
  if (dropIds) {
    parts = parts.map((part) => {
      if (!isObject(part) || !isObject(part.functionResponse) || part.functionResponse.id === undefined) return part;
      const { id: _id, ...response } = part.functionResponse;
      return { ...part, functionResponse: response };
    });
  }
  if (signatures && content.role === 'model') {
    const calls = parts.filter((part): part is Json => isObject(part) && isObject(part.functionCall));
    const signed = calls.some((part) => typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '');
    const first = calls[0];
    if (first && !signed)
      parts = parts.map((part) => (part === first ? { ...first, thoughtSignature: SKIP_SIGNATURE } : part));
  }
  return parts === content.parts ? content : { ...content, parts };
}

function option<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

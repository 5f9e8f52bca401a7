import type { ConvertContext, Json } from '../../../convert/types.ts';
import { answerCallId, asArray, asNumber, asObject, asString, isObject, nowSeconds, randomId } from './fields.ts';
import { assistantParts, modelMessage } from './request.ts';
import { finishFromHub, finishToHub, usageFromHub, usageToHub } from './usage.ts';

/** Whole answers: Gemini GenerateContentResponse ⇄ OpenAI chat.completion (the hub). */

export function geminiResponseToHub(body: Json, ctx: ConvertContext): Json {
  let counter = 0;
  const tag = asString(body.responseId) ?? randomId();
  const nextId = () => answerCallId(tag, counter++);
  const choices = asArray(body.candidates)
    .filter(isObject)
    .map((candidate, position) => {
      const message = modelMessage(asArray(asObject(candidate.content)?.parts).filter(isObject), nextId, true);
      return {
        index: asNumber(candidate.index) ?? position,
        message,
        finish_reason: finishToHub(candidate.finishReason, Array.isArray(message.tool_calls)),
        logprobs: null,
      };
    });
  if (choices.length === 0) {
    // A prompt blocked before generation: no candidates, only promptFeedback.blockReason.
    const blocked = asString(asObject(body.promptFeedback)?.blockReason);
    choices.push({
      index: 0,
      message: { role: 'assistant', content: '' },
      finish_reason: blocked ? 'content_filter' : 'stop',
      logprobs: null,
    });
  }
  const hub: Json = {
    id: hubId(body),
    object: 'chat.completion',
    created: nowSeconds(),
    model: ctx.model,
    choices,
  };
  const usage = usageToHub(body.usageMetadata);
  if (usage) hub.usage = usage;
  return hub;
}

export const hubId = (body: Json) => {
  const id = asString(body.responseId);
  return id ? `chatcmpl-${id}` : `chatcmpl-${randomId()}`;
};

export function hubResponseToGemini(body: Json, ctx: ConvertContext): Json {
  const candidates = asArray(body.choices)
    .filter(isObject)
    .map((choice, position) => {
      const message = asObject(choice.message) ?? {};
      const parts = assistantParts(message, new Map());
      const refusal = asString(message.refusal);
      if (refusal) parts.push({ text: refusal });
      return {
        content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] },
        finishReason: finishFromHub(choice.finish_reason),
        index: asNumber(choice.index) ?? position,
      };
    });
  const answer: Json = { candidates };
  const usage = usageFromHub(body.usage);
  if (usage) answer.usageMetadata = usage;
  answer.modelVersion = ctx.model;
  answer.responseId = geminiId(body);
  return answer;
}

export const geminiId = (body: Json) => {
  const id = asString(body.id) ?? randomId();
  return id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id;
};

import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubUsageFromCohere } from '../usage.ts';
import { asArray, asNumber, asString, isObject, put } from './fields.ts';

/** The documents' texts, kept for the answer when the client asked for them back (Cohere v2 never returns them). */
const returned = new WeakMap<ConvertContext, string[]>();

/**
 * The relay's rerank request (Jina/Cohere style: query, documents as strings or `{text}`, top_n,
 * return_documents) → Cohere v2 rerank, which takes the documents as strings only.
 */
export function rerankToCohere(body: Json, ctx: ConvertContext): Json {
  const documents = asArray(body.documents).map((doc) =>
    typeof doc === 'string' ? doc : isObject(doc) ? (asString(doc.text) ?? JSON.stringify(doc)) : String(doc),
  );
  if (typeof body.query !== 'string' || documents.length === 0) {
    throw new Error('a rerank request needs a query and at least one document');
  }
  if (body.return_documents === true) returned.set(ctx, documents);
  const request: Json = { model: ctx.upstreamModel, query: body.query, documents };
  put(request, 'top_n', asNumber(body.top_n));
  put(request, 'max_tokens_per_doc', asNumber(body.max_tokens_per_doc));
  return request;
}

/** Cohere's rerank answer → the relay's: the same results (with the documents when asked), usage when tokens were reported. */
export function cohereRerankToRelay(body: Json, ctx: ConvertContext): Json {
  const documents = returned.get(ctx);
  const results = asArray(body.results)
    .filter(isObject)
    .map((result) => {
      const index = asNumber(result.index) ?? 0;
      const out: Json = { index, relevance_score: asNumber(result.relevance_score) ?? 0 };
      if (documents?.[index] !== undefined) out.document = { text: documents[index] };
      return out;
    });
  const answer: Json = { id: body.id, model: ctx.model, results };
  if (isObject(body.meta)) answer.meta = body.meta;
  const usage = hubUsageFromCohere(body.meta);
  if (usage) answer.usage = { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens };
  return answer;
}

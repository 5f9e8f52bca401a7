import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import { isObject } from '../../upstream-json.ts';

/**
 * DashScope text-rerank (gte-rerank) ↔ the relay's rerank format (Jina/Cohere style): the query and
 * documents go under `input`, top_n and return_documents under `parameters`.
 */
export const dashscopeRerankAdapter: UpstreamAdapter = {
  format: 'dashscope-rerank',
  hub: 'rerank',
  requestFromHub: (body: Json) => {
    const documents = (Array.isArray(body.documents) ? body.documents : []).map((doc: unknown) =>
      isObject(doc) && typeof doc.text === 'string' ? doc.text : doc,
    );
    const parameters: Json = { return_documents: body.return_documents !== false };
    if (typeof body.top_n === 'number') parameters.top_n = body.top_n;
    return { model: body.model, input: { query: body.query, documents }, parameters };
  },
  responseToHub: (body: Json, ctx: ConvertContext) => {
    const results = (Array.isArray(body.output?.results) ? body.output.results : []).filter(isObject);
    const tokens = Number(body.usage?.total_tokens) || 0;
    return {
      id: body.request_id,
      model: ctx.model,
      results: results.map((r: Json) => ({
        index: r.index,
        relevance_score: r.relevance_score,
        ...(isObject(r.document) ? { document: r.document } : {}),
      })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  },
  streamToHub: (): StreamConverter => ({ push: () => [], end: () => [] }),
};

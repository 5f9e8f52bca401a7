import type { Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import { isObject } from '../../upstream-json.ts';

/**
 * DashScope text-to-image (wanx) ↔ OpenAI images: the prompt under `input`, size as `W*H` and n
 * under `parameters`; the finished task's result URLs become OpenAI's `data`.
 */
export const dashscopeImagesAdapter: UpstreamAdapter = {
  format: 'dashscope-images',
  hub: 'openai-images',
  requestFromHub: (body: Json) => {
    const input: Json = { prompt: body.prompt };
    if (typeof body.negative_prompt === 'string') input.negative_prompt = body.negative_prompt;
    const parameters: Json = { n: typeof body.n === 'number' ? body.n : 1 };
    if (typeof body.size === 'string' && /^\d+x\d+$/.test(body.size)) parameters.size = body.size.replace('x', '*');
    if (typeof body.seed === 'number') parameters.seed = body.seed;
    return { model: body.model, input, parameters };
  },
  responseToHub: (body: Json) => {
    const results = (Array.isArray(body.output?.results) ? body.output.results : []).filter(
      (r: unknown) => isObject(r) && typeof r.url === 'string',
    );
    const submitted = Date.parse(String(body.output?.submit_time ?? ''));
    return {
      created: Math.floor((Number.isFinite(submitted) ? submitted : Date.now()) / 1000),
      data: results.map((r: Json) => ({
        url: r.url,
        ...(typeof r.actual_prompt === 'string' ? { revised_prompt: r.actual_prompt } : {}),
      })),
    };
  },
  streamToHub: (): StreamConverter => ({ push: () => [], end: () => [] }),
};

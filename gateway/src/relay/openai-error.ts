/** The error body OpenAI clients (and their SDKs) understand. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(message: string, type: string, code: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param: null, code } };
}

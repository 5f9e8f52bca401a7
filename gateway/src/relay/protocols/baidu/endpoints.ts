/**
 * ERNIE v1 serves each model at its own path under /rpc/2.0/ai_custom/v1/wenxinworkshop: chat models
 * at /chat/{endpoint}, embedding models at /embeddings/{endpoint}. The public names map to these
 * (Baidu's Qianfan SDK carries the same table); a name not listed is taken as a custom deployment's
 * endpoint, lower-cased as Baidu spells them.
 */
export const WENXIN_PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop';

const CHAT_ENDPOINTS: Readonly<Record<string, string>> = {
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-4.0-Turbo-8K': 'ernie-4.0-turbo-8k',
  'ERNIE-4.0-8K-Preview': 'ernie-4.0-8k-preview',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Bot': 'completions',
  'ERNIE-3.5-128K': 'ernie-3.5-128k',
  'ERNIE-Bot-8k': 'ernie_bot_8k',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Speed': 'ernie_speed',
  'ERNIE-Speed-128K': 'ernie-speed-128k',
  'ERNIE-Lite-8K': 'ernie-lite-8k',
  'ERNIE-Lite-8K-0308': 'ernie-lite-8k',
  'ERNIE-Lite-8K-0922': 'eb-instant',
  'ERNIE-Bot-turbo': 'eb-instant',
  'ERNIE-Tiny-8K': 'ernie-tiny-8k',
  'ERNIE-Character-8K': 'ernie-char-8k',
  'ERNIE-Functions-8K': 'ernie-func-8k',
};

const EMBEDDING_ENDPOINTS: Readonly<Record<string, string>> = {
  'Embedding-V1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k',
};

export const BAIDU_CHAT_MODELS = Object.keys(CHAT_ENDPOINTS);
export const BAIDU_EMBEDDING_MODELS = Object.keys(EMBEDDING_ENDPOINTS);

export function chatPath(model: string): string {
  return `${WENXIN_PREFIX}/chat/${encodeURIComponent(CHAT_ENDPOINTS[model] ?? model.toLowerCase())}`;
}

export function embeddingsPath(model: string): string {
  return `${WENXIN_PREFIX}/embeddings/${encodeURIComponent(EMBEDDING_ENDPOINTS[model] ?? model.toLowerCase())}`;
}

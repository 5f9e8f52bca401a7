/**
 * Channel constants of spec doc 2 §4 and §9: statuses, types, response-time colours, local storage keys.
 * The type list is the gateway's (gateway/src/domain/channels/types.ts; a unit test keeps them equal).
 */

export const CHANNEL_STATUS = { enabled: 1, disabled: 2, autoDisabled: 3 } as const;

/** Channel types: the numeric id the API uses and the display name. */
export const CHANNEL_TYPES: ReadonlyArray<{ id: number; name: string }> = [
  { id: 1, name: 'OpenAI' },
  { id: 2, name: 'Midjourney' },
  { id: 3, name: 'Azure' },
  { id: 4, name: 'Ollama' },
  { id: 5, name: 'MidjourneyPlus' },
  { id: 6, name: 'OpenAIMax' },
  { id: 7, name: 'OhMyGPT' },
  { id: 8, name: 'Custom' },
  { id: 9, name: 'AILS' },
  { id: 10, name: 'AIProxy' },
  { id: 11, name: 'PaLM' },
  { id: 12, name: 'API2GPT' },
  { id: 13, name: 'AIGC2D' },
  { id: 14, name: 'Anthropic' },
  { id: 15, name: 'Baidu' },
  { id: 16, name: 'Zhipu' },
  { id: 17, name: 'Ali' },
  { id: 18, name: 'Xunfei' },
  { id: 19, name: '360' },
  { id: 20, name: 'OpenRouter' },
  { id: 21, name: 'AIProxyLibrary' },
  { id: 22, name: 'FastGPT' },
  { id: 23, name: 'Tencent' },
  { id: 24, name: 'Gemini' },
  { id: 25, name: 'Moonshot' },
  { id: 26, name: 'ZhipuV4' },
  { id: 27, name: 'Perplexity' },
  { id: 31, name: 'LingYiWanWu' },
  { id: 33, name: 'AWS' },
  { id: 34, name: 'Cohere' },
  { id: 35, name: 'MiniMax' },
  { id: 36, name: 'SunoAPI' },
  { id: 37, name: 'Dify' },
  { id: 38, name: 'Jina' },
  { id: 39, name: 'Cloudflare' },
  { id: 40, name: 'SiliconFlow' },
  { id: 41, name: 'VertexAI' },
  { id: 42, name: 'Mistral' },
  { id: 43, name: 'DeepSeek' },
  { id: 44, name: 'MokaAI' },
  { id: 45, name: 'VolcEngine' },
  { id: 46, name: 'BaiduV2' },
  { id: 47, name: 'Xinference' },
  { id: 48, name: 'xAI' },
  { id: 49, name: 'Coze' },
  { id: 50, name: 'Kling' },
  { id: 51, name: 'Jimeng' },
  { id: 52, name: 'Vidu' },
  { id: 53, name: 'Submodel' },
  { id: 54, name: 'DoubaoVideo' },
  { id: 55, name: 'Sora' },
  { id: 56, name: 'Replicate' },
  { id: 57, name: 'Codex' },
];

export function channelTypeName(type: number): string {
  return CHANNEL_TYPES.find((t) => t.id === type)?.name ?? `#${type}`;
}

/** Key formats with separators (spec doc 2 §9): the key field's hint for these types. */
export const KEY_FORMATS: Record<number, string> = {
  15: 'APIKey|SecretKey',
  18: 'APPID|APISecret|APIKey',
  22: 'APIKey-AppId',
  23: 'AppId|SecretId|SecretKey',
  33: 'AccessKey|SecretAccessKey|Region',
};

/** Types whose `other` field means something (spec doc 2 §9 special types), with its label key. */
export const OTHER_FIELD: Record<number, string> = {
  3: 'channel.form.other_azure',
  18: 'channel.form.other_spark',
  21: 'channel.form.other_knowledge',
  39: 'channel.form.other_account',
  41: 'channel.form.other_region',
};

/** Spark (type 18) with an empty `other` uses this version (spec doc 2 §5). */
export const SPARK_TYPE = 18;
export const SPARK_DEFAULT_VERSION = 'v2.1';

/** Response time colours (spec doc 2 §9): 0 untested, ≤1 s green, ≤3 s lime, ≤5 s yellow, else red. */
export type ResponseColour = 'untested' | 'green' | 'lime' | 'yellow' | 'red';
export function responseColour(ms: number): ResponseColour {
  if (!ms) return 'untested';
  if (ms <= 1000) return 'green';
  if (ms <= 3000) return 'lime';
  if (ms <= 5000) return 'yellow';
  return 'red';
}
export const RESPONSE_COLOURS: Record<ResponseColour, string> = {
  untested: '#9e9e9e',
  green: '#2e7d32',
  lime: '#7cb342',
  yellow: '#f9a825',
  red: '#d32f2f',
};

/** Local storage (spec doc 2 §9): remembered columns, page size and id sort, plus tag mode. */
export const COLUMNS_KEY = 'channels-table-columns';
export const PAGE_SIZE_KEY = 'page-size';
export const ID_SORT_KEY = 'id-sort';
export const TAG_MODE_KEY = 'tag-mode';
export const PAGE_SIZES = [10, 20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 10;

/** Table priority and weight minimums (spec doc 2 §5). */
export const PRIORITY_MIN = -999;
export const WEIGHT_MIN = 0;

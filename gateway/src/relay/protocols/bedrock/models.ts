/**
 * Bedrock model ids: public Claude names mapped to Bedrock's ids, and cross-region inference
 * profiles for the models Bedrock serves on demand only through one (AWS "Supported Regions and
 * models for inference profiles").
 */

interface BedrockModel {
  id: string;
  /** Bedrock refuses on-demand calls to the bare id: it must be prefixed by a geography's profile. */
  profileOnly: boolean;
}

/** Public Claude model name → Bedrock model. */
const CLAUDE_MODELS: Readonly<Record<string, BedrockModel>> = {
  'claude-3-haiku-20240307': { id: 'anthropic.claude-3-haiku-20240307-v1:0', profileOnly: false },
  'claude-3-sonnet-20240229': { id: 'anthropic.claude-3-sonnet-20240229-v1:0', profileOnly: false },
  'claude-3-opus-20240229': { id: 'anthropic.claude-3-opus-20240229-v1:0', profileOnly: false },
  'claude-3-5-sonnet-20240620': { id: 'anthropic.claude-3-5-sonnet-20240620-v1:0', profileOnly: false },
  'claude-3-5-sonnet-20241022': { id: 'anthropic.claude-3-5-sonnet-20241022-v2:0', profileOnly: false },
  'claude-3-5-haiku-20241022': { id: 'anthropic.claude-3-5-haiku-20241022-v1:0', profileOnly: true },
  'claude-3-7-sonnet-20250219': { id: 'anthropic.claude-3-7-sonnet-20250219-v1:0', profileOnly: true },
  'claude-sonnet-4-20250514': { id: 'anthropic.claude-sonnet-4-20250514-v1:0', profileOnly: true },
  'claude-opus-4-20250514': { id: 'anthropic.claude-opus-4-20250514-v1:0', profileOnly: true },
  'claude-opus-4-1-20250805': { id: 'anthropic.claude-opus-4-1-20250805-v1:0', profileOnly: true },
  'claude-sonnet-4-5-20250929': { id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', profileOnly: true },
  'claude-haiku-4-5-20251001': { id: 'anthropic.claude-haiku-4-5-20251001-v1:0', profileOnly: true },
};

/** Bedrock ids (not public names) that need a profile too: Meta's newest Llama models and Nova Premier. */
const PROFILE_ONLY_IDS: ReadonlySet<string> = new Set([
  ...Object.values(CLAUDE_MODELS)
    .filter((model) => model.profileOnly)
    .map((model) => model.id),
  'meta.llama3-2-1b-instruct-v1:0',
  'meta.llama3-2-3b-instruct-v1:0',
  'meta.llama3-2-11b-instruct-v1:0',
  'meta.llama3-2-90b-instruct-v1:0',
  'meta.llama3-3-70b-instruct-v1:0',
  'meta.llama4-scout-17b-instruct-v1:0',
  'meta.llama4-maverick-17b-instruct-v1:0',
  'amazon.nova-premier-v1:0',
]);

/** Inference profile geographies, as their id prefixes name them. */
const GEOGRAPHY_PREFIXES = ['us.', 'eu.', 'apac.', 'us-gov.', 'global.'];

/** The inference-profile geography of a region: us-east-1 → us, eu-west-3 → eu, ap-northeast-1 → apac. */
export function geographyOf(region: string): string | undefined {
  if (region.startsWith('us-gov-')) return 'us-gov';
  if (region.startsWith('us-')) return 'us';
  if (region.startsWith('eu-')) return 'eu';
  if (region.startsWith('ap-')) return 'apac';
  return undefined;
}

/** A Claude model, by its public name or its Bedrock id (with or without a profile prefix). */
export function isClaudeModel(model: string): boolean {
  return model.startsWith('claude-') || withoutProfile(model).startsWith('anthropic.claude');
}

function withoutProfile(model: string): string {
  const prefix = GEOGRAPHY_PREFIXES.find((p) => model.startsWith(p));
  return prefix ? model.slice(prefix.length) : model;
}

/**
 * The model id to call in `region`: a public Claude name becomes its Bedrock id, and a model served
 * only through an inference profile gets the region's geography in front. Ids already in Bedrock
 * form or already prefixed, ARNs and unknown names go as they are.
 */
export function bedrockModelId(model: string, region: string): string {
  const id = CLAUDE_MODELS[model]?.id ?? model;
  if (id !== withoutProfile(id) || !PROFILE_ONLY_IDS.has(id)) return id;
  const geography = geographyOf(region);
  return geography ? `${geography}.${id}` : id;
}

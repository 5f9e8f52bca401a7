import type { ConvertContext, Json } from '../../../convert/types.ts';

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Image formats Converse takes, by media type. */
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * A hub chat request → a Converse request: system and developer messages into `system`, the rest
 * into alternating user/assistant `messages` (tool results are user content, consecutive messages of
 * one role are merged, as Converse requires), sampling into `inferenceConfig`, tools into `toolConfig`.
 */
export function hubRequestToConverse(body: Json, _ctx: ConvertContext): Json {
  const system: Json[] = [];
  const messages: Json[] = [];
  const append = (role: 'user' | 'assistant', content: Json[]) => {
    if (content.length === 0) return;
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message)) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content));
        break;
      case 'user':
        append('user', contentBlocks(message.content));
        break;
      case 'assistant':
        append('assistant', [...textBlocks(message.content), ...toolUses(message.tool_calls)]);
        break;
      case 'tool':
        append('user', [
          {
            toolResult: {
              toolUseId: String(message.tool_call_id ?? ''),
              content: [{ text: textOf(message.content) || ' ' }],
            },
          },
        ]);
        break;
    }
  }
  const converse: Json = { messages };
  if (system.length > 0) converse.system = system;
  const inference = inferenceConfig(body);
  if (Object.keys(inference).length > 0) converse.inferenceConfig = inference;
  const tools = toolConfig(body);
  if (tools) converse.toolConfig = tools;
  return converse;
}

function inferenceConfig(body: Json): Json {
  const config: Json = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
  if (stop.length > 0) config.stopSequences = stop.filter((s: unknown) => typeof s === 'string');
  return config;
}

/** Function tools as toolSpecs; tool_choice auto / required / one function as auto / any / tool. */
function toolConfig(body: Json): Json | undefined {
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .filter((tool: unknown) => isObject(tool) && isObject(tool.function))
    .map((tool: Json) => ({
      toolSpec: {
        name: String(tool.function.name ?? ''),
        ...(typeof tool.function.description === 'string' && tool.function.description !== ''
          ? { description: tool.function.description }
          : {}),
        inputSchema: { json: isObject(tool.function.parameters) ? tool.function.parameters : { type: 'object' } },
      },
    }));
  if (tools.length === 0) return undefined;
  const choice = body.tool_choice;
  const config: Json = { tools };
  if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (choice === 'required') config.toolChoice = { any: {} };
  else if (isObject(choice) && isObject(choice.function)) config.toolChoice = { tool: { name: choice.function.name } };
  return config;
}

function toolUses(calls: unknown): Json[] {
  return (Array.isArray(calls) ? calls : [])
    .filter((call: unknown) => isObject(call) && isObject(call.function))
    .map((call: Json) => ({
      toolUse: {
        toolUseId: String(call.id ?? ''),
        name: String(call.function.name ?? ''),
        input: args(call.function.arguments),
      },
    }));
}

/** Tool arguments as the JSON object Converse wants, whatever the hub's string held. */
function args(value: unknown): Json {
  if (isObject(value)) return value;
  try {
    const parsed: unknown = JSON.parse(typeof value === 'string' ? value : '');
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return (Array.isArray(content) ? content : [])
    .filter((part: unknown) => isObject(part) && typeof part.text === 'string')
    .map((part: Json) => part.text)
    .join('');
}

/** Converse refuses blank text blocks, so empty text is left out. */
function textBlocks(content: unknown): Json[] {
  const text = textOf(content);
  return text.trim() === '' ? [] : [{ text }];
}

/** User content: text, and images given inline as data: URLs (Converse takes bytes or S3, not web URLs). */
function contentBlocks(content: unknown): Json[] {
  if (!Array.isArray(content)) return textBlocks(content);
  const blocks: Json[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string' && part.text.trim() !== '') blocks.push({ text: part.text });
    else if (part.type === 'image_url')
      blocks.push(imageBlock(isObject(part.image_url) ? part.image_url.url : part.image_url));
  }
  return blocks;
}

function imageBlock(url: unknown): Json {
  const match = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
  const format = match ? IMAGE_FORMATS[(match[1] as string).toLowerCase()] : undefined;
  if (!match || !format)
    throw new Error('Bedrock Converse takes images as base64 data: URLs of png, jpeg, gif or webp');
  return { image: { format, source: { bytes: match[2] } } };
}

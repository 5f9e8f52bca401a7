import type { ConvertContext, Json } from '../../../convert/types.ts';
import { isObject, toolInput } from './shared.ts';

/**
 * Claude Messages requests ⇄ hub (OpenAI chat) requests.
 *
 * Claude keeps the system prompt beside the messages, puts tool results as blocks inside user turns
 * and tool calls as blocks inside assistant turns; the hub has system messages, `tool` messages and
 * `tool_calls`. Thinking travels in the hub as `reasoning_content` + `reasoning_signature`, redacted
 * thinking as `redacted_reasoning` (a list of Claude's opaque `data` strings).
 */

// ---------------------------------------------------------------------------------------------
// Claude → hub
// ---------------------------------------------------------------------------------------------

export function claudeRequestToHub(body: Json, ctx: ConvertContext): Json {
  const hub: Json = { model: typeof body.model === 'string' ? body.model : ctx.model, messages: [] };
  const messages: Json[] = hub.messages;

  const system = systemText(body.system);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message)) continue;
    if (message.role === 'assistant') messages.push(assistantToHub(message.content));
    else if (message.role === 'system') {
      const text = systemText(message.content);
      if (text !== undefined) messages.push({ role: 'system', content: text });
    } else messages.push(...userToHub(message.content));
  }

  if (typeof body.max_tokens === 'number') hub.max_tokens = body.max_tokens;
  if (typeof body.temperature === 'number') hub.temperature = body.temperature;
  if (typeof body.top_p === 'number') hub.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) hub.stop = body.stop_sequences;
  if (body.stream === true) {
    hub.stream = true;
    // Claude's stream ends with usage; ask the hub's upstream for it too.
    hub.stream_options = { include_usage: true };
  }
  if (typeof body.metadata?.user_id === 'string') hub.user = body.metadata.user_id;

  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isCustomTool).map((tool: Json) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: isObject(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} },
    },
  }));
  if (tools.length > 0) {
    hub.tools = tools;
    const choice = body.tool_choice;
    if (isObject(choice)) {
      if (choice.type === 'auto') hub.tool_choice = 'auto';
      else if (choice.type === 'any') hub.tool_choice = 'required';
      else if (choice.type === 'none') hub.tool_choice = 'none';
      else if (choice.type === 'tool' && typeof choice.name === 'string')
        hub.tool_choice = { type: 'function', function: { name: choice.name } };
      if (choice.disable_parallel_tool_use === true) hub.parallel_tool_calls = false;
    }
  }

  const effort = effortFromThinking(body);
  if (effort) hub.reasoning_effort = effort;
  return hub;
}

/** The system prompt as one text: a string, or the texts of its blocks one per line. */
function systemText(system: unknown): string | undefined {
  if (typeof system === 'string') return system === '' ? undefined : system;
  if (!Array.isArray(system)) return undefined;
  const texts = system.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Tools the model calls by name (custom tools); Claude's server tools have no hub equivalent. */
function isCustomTool(tool: unknown): tool is Json {
  return (
    isObject(tool) &&
    typeof tool.name === 'string' &&
    (tool.type === undefined || tool.type === null || tool.type === 'custom')
  );
}

/** A Claude image source as the hub's image_url: a data: URL for base64, the URL itself otherwise. */
function imageUrl(source: unknown): string | undefined {
  if (!isObject(source)) return undefined;
  if (source.type === 'base64' && typeof source.data === 'string')
    return `data:${typeof source.media_type === 'string' ? source.media_type : 'image/png'};base64,${source.data}`;
  if (source.type === 'url' && typeof source.url === 'string') return source.url;
  return undefined;
}

/** One Claude content block of a user turn as a hub content part, if the hub can carry it. */
function partToHub(block: Json): Json | undefined {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
  if (block.type === 'image') {
    const url = imageUrl(block.source);
    return url ? { type: 'image_url', image_url: { url } } : undefined;
  }
  if (block.type === 'document' && isObject(block.source)) {
    const source = block.source;
    if (source.type === 'base64' && typeof source.data === 'string') {
      const type = typeof source.media_type === 'string' ? source.media_type : 'application/pdf';
      return {
        type: 'file',
        file: {
          filename: typeof block.title === 'string' ? block.title : 'document.pdf',
          file_data: `data:${type};base64,${source.data}`,
        },
      };
    }
    if (source.type === 'text' && typeof source.data === 'string') return { type: 'text', text: source.data };
  }
  return undefined;
}

/** Text parts collapse to one string (the widest-supported form); anything else stays a list of parts. */
function hubContent(parts: Json[]): string | Json[] {
  return parts.every((part) => part.type === 'text') ? parts.map((part) => part.text).join('\n') : parts;
}

/**
 * A user turn → hub messages: its tool results first, as `tool` messages (the hub wants them right
 * after the assistant's tool calls), then the rest of the turn as one user message. Images inside a
 * tool result cannot ride in a `tool` message, so they follow in the user message.
 */
function userToHub(content: unknown): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  if (!Array.isArray(content)) return [];
  const tools: Json[] = [];
  const parts: Json[] = [];
  const resultImages: Json[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === 'tool_result') {
      const texts: string[] = [];
      if (typeof block.content === 'string') texts.push(block.content);
      else if (Array.isArray(block.content)) {
        for (const inner of block.content) {
          if (!isObject(inner)) continue;
          const part = partToHub(inner);
          if (part?.type === 'text') texts.push(part.text);
          else if (part) resultImages.push(part);
        }
      }
      tools.push({ role: 'tool', tool_call_id: String(block.tool_use_id ?? ''), content: texts.join('\n') });
      continue;
    }
    const part = partToHub(block);
    if (part) parts.push(part);
  }
  const rest = [...resultImages, ...parts];
  return rest.length > 0 ? [...tools, { role: 'user', content: hubContent(rest) }] : tools;
}

/** An assistant turn → one hub assistant message (text, reasoning, tool calls). */
function assistantToHub(content: unknown): Json {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const reasoning: string[] = [];
  const redacted: string[] = [];
  let signature: string | undefined;
  const calls: Json[] = [];
  for (const block of Array.isArray(content) ? content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking') {
      if (typeof block.thinking === 'string') reasoning.push(block.thinking);
      if (typeof block.signature === 'string' && block.signature !== '') signature = block.signature;
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') redacted.push(block.data);
    else if (block.type === 'tool_use') {
      calls.push({
        id: String(block.id ?? ''),
        type: 'function',
        function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: Json = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : calls.length > 0 ? null : '',
  };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (signature !== undefined) message.reasoning_signature = signature;
  if (redacted.length > 0) message.redacted_reasoning = redacted;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** Claude's thinking settings as the hub's reasoning_effort. */
function effortFromThinking(body: Json): string | undefined {
  const thinking = body.thinking;
  if (!isObject(thinking)) return undefined;
  if (thinking.type === 'enabled') {
    const budget = typeof thinking.budget_tokens === 'number' ? thinking.budget_tokens : 0;
    return budget >= BUDGET.high ? 'high' : budget >= BUDGET.medium ? 'medium' : 'low';
  }
  if (thinking.type === 'adaptive') {
    const effort = body.output_config?.effort;
    if (effort === 'low' || effort === 'medium' || effort === 'high') return effort;
    if (effort === 'max') return 'high';
    return 'medium';
  }
  return undefined;
}

/**
 * Thinking budgets per reasoning effort, when the request says no max_tokens to take a share of
 * (the provider fits the budget under the max_tokens it settles on).
 */
const BUDGET = { low: 1024, medium: 4096, high: 16384 } as const;
/** The share of max_tokens a reasoning effort may spend on thinking, when max_tokens is known. */
const SHARE = { low: 0.2, medium: 0.5, high: 0.8 } as const;
/** Claude's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

// ---------------------------------------------------------------------------------------------
// hub → Claude
// ---------------------------------------------------------------------------------------------

export function claudeRequestFromHub(body: Json, ctx: ConvertContext): Json {
  const claude: Json = { model: typeof body.model === 'string' ? body.model : ctx.upstreamModel };
  const system: Json[] = [];
  const messages: Json[] = [];
  const push = (role: 'user' | 'assistant', blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    // Claude wants a tool call's results together in the next user turn; consecutive turns of one role merge.
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };

  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message)) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content));
        break;
      case 'assistant':
        push('assistant', assistantFromHub(message));
        break;
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: String(message.tool_call_id ?? ''),
            content: textBlocks(message.content)
              .map((block) => block.text)
              .join('\n'),
          },
        ]);
        break;
      default:
        push('user', userFromHub(message.content));
    }
  }
  if (system.length > 0) claude.system = plainText(system) ?? system;
  claude.messages = messages.map((message) => {
    const text = plainText(message.content);
    return text === undefined ? message : { role: message.role, content: text };
  });

  const max = positive(body.max_completion_tokens) ?? positive(body.max_tokens);
  if (max !== undefined) claude.max_tokens = max;
  // Claude's temperature runs from 0 to 1, OpenAI's up to 2.
  if (typeof body.temperature === 'number') claude.temperature = Math.min(1, Math.max(0, body.temperature));
  if (typeof body.top_p === 'number') claude.top_p = body.top_p;
  if (typeof body.top_k === 'number') claude.top_k = body.top_k;
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
  const sequences = stop.filter((s: unknown) => typeof s === 'string' && s !== '');
  if (sequences.length > 0) claude.stop_sequences = sequences;
  if (body.stream === true) claude.stream = true;
  if (typeof body.user === 'string' && body.user !== '') claude.metadata = { user_id: body.user };

  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .filter((tool: unknown) => isObject(tool) && tool.type === 'function' && typeof tool.function?.name === 'string')
    .map((tool: Json) => ({
      name: tool.function.name,
      ...(typeof tool.function.description === 'string' ? { description: tool.function.description } : {}),
      input_schema: isObject(tool.function.parameters) ? tool.function.parameters : { type: 'object', properties: {} },
    }));
  if (tools.length > 0) {
    claude.tools = tools;
    const choice = body.tool_choice;
    let claudeChoice: Json | undefined;
    if (choice === 'auto') claudeChoice = { type: 'auto' };
    else if (choice === 'required') claudeChoice = { type: 'any' };
    else if (choice === 'none') claudeChoice = { type: 'none' };
    else if (isObject(choice) && typeof choice.function?.name === 'string')
      claudeChoice = { type: 'tool', name: choice.function.name };
    if (body.parallel_tool_calls === false && claudeChoice?.type !== 'none') {
      claudeChoice = { ...(claudeChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
    }
    if (claudeChoice) claude.tool_choice = claudeChoice;
  }

  const thinking = thinkingFromEffort(body.reasoning_effort, max);
  if (thinking) {
    claude.thinking = thinking;
    // Claude refuses sampling changes while thinking: temperature and top_k unset, top_p at least 0.95.
    delete claude.temperature;
    delete claude.top_k;
    if (typeof claude.top_p === 'number' && claude.top_p < 0.95) delete claude.top_p;
  }
  return claude;
}

const positive = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;

/** A content list that is one plain text block, as the string it is (Claude's short form). */
function plainText(blocks: Json[]): string | undefined {
  if (blocks.length !== 1) return undefined;
  const [block] = blocks;
  return block?.type === 'text' && block.cache_control === undefined ? block.text : undefined;
}

/** The texts of a hub content (string or parts) as Claude text blocks; cache_control rides along. */
function textBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content
    .filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string' && part.text !== '')
    .map((part) => withCache({ type: 'text', text: part.text }, part));
}

const withCache = (block: Json, part: Json): Json =>
  isObject(part.cache_control) ? { ...block, cache_control: part.cache_control } : block;

/** An image URL as a Claude image source: data: URLs as base64, anything else by URL. */
function imageSource(url: string): Json {
  const data = /^data:([^;,]+)?((?:;[^;,]*)*?)(;base64)?,(.*)$/s.exec(url);
  if (!data) return { type: 'url', url };
  const mediaType = data[1] || 'image/png';
  const payload = data[3] ? data[4]! : Buffer.from(decodeURIComponent(data[4]!), 'utf8').toString('base64');
  return { type: 'base64', media_type: mediaType, data: payload };
}

function userFromHub(content: unknown): Json[] {
  if (!Array.isArray(content)) return textBlocks(content);
  const blocks: Json[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text') blocks.push(...textBlocks([part]));
    else if (part.type === 'image_url') {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      if (typeof url === 'string' && url !== '')
        blocks.push(withCache({ type: 'image', source: imageSource(url) }, part));
    } else if (part.type === 'file' && typeof part.file?.file_data === 'string') {
      const source = imageSource(part.file.file_data);
      if (source.type === 'base64' && source.media_type === 'application/pdf') {
        blocks.push(
          withCache(
            {
              type: 'document',
              source,
              ...(typeof part.file.filename === 'string' ? { title: part.file.filename } : {}),
            },
            part,
          ),
        );
      }
    }
  }
  return blocks;
}

function assistantFromHub(message: Json): Json[] {
  const blocks: Json[] = [];
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : message.reasoning;
  // A thinking block goes back to Claude only with the signature Claude gave it; reasoning from
  // other models (no signature) would be refused, so it stays behind.
  if (
    typeof reasoning === 'string' &&
    typeof message.reasoning_signature === 'string' &&
    message.reasoning_signature !== ''
  ) {
    blocks.push({ type: 'thinking', thinking: reasoning, signature: message.reasoning_signature });
  }
  for (const data of Array.isArray(message.redacted_reasoning) ? message.redacted_reasoning : []) {
    if (typeof data === 'string' && data !== '') blocks.push({ type: 'redacted_thinking', data });
  }
  blocks.push(...textBlocks(message.content));
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    blocks.push({
      type: 'tool_use',
      id: String(call.id ?? ''),
      name: String(call.function.name ?? ''),
      input: toolInput(call.function.arguments),
    });
  }
  return blocks;
}

/** The hub's reasoning_effort as Claude's thinking setting (none for `minimal`/`none`). */
function thinkingFromEffort(effort: unknown, max: number | undefined): Json | undefined {
  if (effort !== 'low' && effort !== 'medium' && effort !== 'high') return undefined;
  if (max === undefined) return { type: 'enabled', budget_tokens: BUDGET[effort] };
  // Claude wants MIN_THINKING_BUDGET ≤ budget < max_tokens; too small a max_tokens leaves no room.
  if (max <= MIN_THINKING_BUDGET) return undefined;
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(max * SHARE[effort]));
  return { type: 'enabled', budget_tokens: Math.min(budget, max - 1) };
}

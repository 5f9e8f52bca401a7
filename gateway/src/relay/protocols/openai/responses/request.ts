import type { ConvertContext, Json } from '../../../convert/types.ts';
import {
  asArray,
  asJsonText,
  asNumber,
  asString,
  compact,
  isObject,
  newId,
  ResponsesConversionError,
  reasoningTextOf,
} from './common.ts';

/**
 * Requests: a Responses request ⇄ a chat-completions (hub) request.
 *
 * Responses → chat (a Responses client, a chat-only upstream):
 * - `instructions` → a leading system message; `input` (a string, or items) → messages: message items by role
 *   (`developer` becomes `system`, which every chat upstream knows), consecutive `function_call` items → one
 *   assistant message's `tool_calls` (call_id → id), `function_call_output` → `tool` messages, `reasoning` items
 *   → `reasoning_content` (summary text) and `reasoning_signature` (`encrypted_content`) of the assistant message
 *   that follows. Items of built-in tools (web_search_call, …) have no chat form and are left out.
 * - function tools flattened ⇄ nested; built-in tools dropped (they only work Responses → Responses).
 * - `store`, `include`, `truncation` and `metadata` are dropped. What needs state a chat upstream does not keep
 *   — `previous_response_id`, `conversation`, `item_reference` items, `background`, a stored `prompt` — is
 *   refused with a {@link ResponsesConversionError} (400): answering without that context would be a wrong answer.
 *
 * Chat → Responses (a chat client, a Responses-only upstream):
 * - leading system/developer messages → `instructions`; the rest → input items (assistant reasoning becomes a
 *   reasoning item only with its signature, as encrypted_content: a Responses upstream accepts nothing else);
 * - `store` defaults to false (chat completions does not keep answers unless asked); function tools are sent
 *   with `strict: false` unless set (Responses would otherwise default to strict schemas);
 * - `max_output_tokens` is at least 16, the Responses minimum; `n` > 1 is refused (one answer per response);
 *   `stop`, penalties, `seed`, `logit_bias`, `logprobs` and audio output have no Responses form and are dropped.
 */

const MIN_OUTPUT_TOKENS = 16;

// ---------------------------------------------------------------------------------------------------------------
// Responses → chat
// ---------------------------------------------------------------------------------------------------------------

export function responsesRequestToChat(body: Json, _ctx: ConvertContext): Json {
  rejectStateful(body);
  const messages: Json[] = [];
  if (typeof body.instructions === 'string') {
    if (body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  } else if (Array.isArray(body.instructions)) {
    appendItems(messages, body.instructions);
  }
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  else appendItems(messages, asArray(body.input));

  const chat: Json = {
    model: body.model,
    // An assistant turn that kept only reasoning means nothing to a chat upstream.
    messages: messages.filter((m) => m.role !== 'assistant' || m.content != null || m.tool_calls !== undefined),
  };
  const maxTokens = asNumber(body.max_output_tokens);
  if (maxTokens !== undefined) chat.max_completion_tokens = maxTokens;
  for (const key of [
    'temperature',
    'top_p',
    'parallel_tool_calls',
    'user',
    'safety_identifier',
    'prompt_cache_key',
    'service_tier',
  ]) {
    if (body[key] !== undefined && body[key] !== null) chat[key] = body[key];
  }
  if (isObject(body.reasoning) && typeof body.reasoning.effort === 'string') {
    chat.reasoning_effort = body.reasoning.effort;
  }
  if (isObject(body.text)) {
    const format = responseFormatToChat(body.text.format);
    if (format) chat.response_format = format;
    if (typeof body.text.verbosity === 'string') chat.verbosity = body.text.verbosity;
  }
  Object.assign(chat, toolsToChat(body.tools, body.tool_choice));
  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

function rejectStateful(body: Json): void {
  if (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') {
    throw new ResponsesConversionError(
      'previous_response_id is not supported for this model: its upstream keeps no responses; send the whole conversation in input',
    );
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw new ResponsesConversionError(
      'conversation is not supported for this model: its upstream keeps no conversations; send the whole conversation in input',
    );
  }
  if (body.background === true) {
    throw new ResponsesConversionError('background is not supported for this model');
  }
  if (isObject(body.prompt)) {
    throw new ResponsesConversionError('stored prompts (prompt) are not supported for this model');
  }
}

/** Appends the chat messages for Responses input items, merging what chat keeps in one assistant message. */
function appendItems(messages: Json[], items: unknown[]): void {
  for (const item of items) {
    if (!isObject(item)) continue;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message':
        appendMessage(messages, item);
        break;
      case 'function_call': {
        const assistant = openAssistant(messages, false);
        assistant.tool_calls = [
          ...(assistant.tool_calls ?? []),
          {
            id: asString(item.call_id) ?? asString(item.id) ?? newId('call'),
            type: 'function',
            function: { name: asString(item.name) ?? '', arguments: asJsonText(item.arguments) },
          },
        ];
        break;
      }
      case 'function_call_output':
        messages.push({
          role: 'tool',
          tool_call_id: asString(item.call_id) ?? '',
          content: toolOutputText(item.output),
        });
        break;
      case 'reasoning': {
        const text = reasoningTextOf(item);
        const signature = asString(item.encrypted_content);
        if (!text && !signature) break;
        const assistant = openAssistant(messages, true);
        if (text)
          assistant.reasoning_content = assistant.reasoning_content
            ? `${assistant.reasoning_content}\n\n${text}`
            : text;
        if (signature) assistant.reasoning_signature = signature;
        break;
      }
      case 'item_reference':
        throw new ResponsesConversionError(
          'item_reference input items are not supported for this model: its upstream keeps no items',
        );
      default:
        // Built-in tool calls and their outputs (web_search_call, computer_call, …): no chat form.
        break;
    }
  }
}

/**
 * The assistant message that the next reasoning or function call belongs to: the last message if it is an
 * assistant's that can still take it, else a new one. A reasoning item starts a new turn unless the last
 * assistant message holds nothing but reasoning.
 */
function openAssistant(messages: Json[], forReasoning: boolean): Json {
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    const empty = last.content == null && last.tool_calls === undefined;
    if (empty || !forReasoning) return last;
  }
  const created: Json = { role: 'assistant', content: null };
  messages.push(created);
  return created;
}

function appendMessage(messages: Json[], item: Json): void {
  const role = item.role;
  if (role === 'assistant') {
    const text =
      typeof item.content === 'string' ? item.content : partsText(item.content, ['output_text', 'input_text', 'text']);
    const refusal = Array.isArray(item.content) ? partsText(item.content, ['refusal'], 'refusal') : '';
    // Reasoning items come before the message they belong to: fill that turn rather than start another.
    const last = messages.at(-1);
    let target = last;
    if (target?.role !== 'assistant' || target.content != null || target.tool_calls !== undefined) {
      target = { role: 'assistant', content: null };
      messages.push(target);
    }
    target.content = text;
    if (refusal) target.refusal = refusal;
    return;
  }
  if (role === 'system' || role === 'developer') {
    const text =
      typeof item.content === 'string'
        ? item.content
        : partsText(item.content, ['input_text', 'text', 'output_text'], 'text', '\n\n');
    messages.push({ role: 'system', content: text });
    return;
  }
  messages.push({ role: 'user', content: userContentToChat(item.content) });
}

function userContentToChat(content: unknown): unknown {
  if (typeof content === 'string') return content;
  const parts: Json[] = [];
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        parts.push({ type: 'text', text: asString(part.text) ?? '' });
        break;
      case 'input_image': {
        const url = asString(part.image_url) ?? asString(part.image_url?.url);
        const detail = ['auto', 'low', 'high'].includes(part.detail) ? part.detail : undefined;
        if (url) parts.push({ type: 'image_url', image_url: compact({ url, detail }) });
        else if (typeof part.file_id === 'string') parts.push({ type: 'file', file: { file_id: part.file_id } });
        break;
      }
      case 'input_file': {
        if (typeof part.file_data === 'string' || typeof part.file_id === 'string') {
          parts.push({
            type: 'file',
            file: compact({
              file_data: asString(part.file_data),
              file_id: asString(part.file_id),
              filename: asString(part.filename),
            }),
          });
        } else if (typeof part.file_url === 'string') {
          throw new ResponsesConversionError(
            'input_file with file_url is not supported for this model: send the file as file_data',
          );
        }
        break;
      }
      case 'input_audio':
        if (isObject(part.input_audio)) parts.push({ type: 'input_audio', input_audio: part.input_audio });
        break;
      default:
        break;
    }
  }
  return parts;
}

function partsText(content: unknown, types: string[], field = 'text', separator = ''): string {
  return asArray(content)
    .filter((part): part is Json => isObject(part) && types.includes(part.type))
    .map((part) => asString(part[field]) ?? '')
    .join(separator);
}

/** A function_call_output's output as the text a chat `tool` message carries (images and files have no place there). */
function toolOutputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return partsText(output, ['input_text', 'output_text', 'text']);
  return asJsonText(output);
}

function responseFormatToChat(format: unknown): Json | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_schema') {
    return {
      type: 'json_schema',
      json_schema: compact({
        name: asString(format.name) ?? 'response',
        description: asString(format.description),
        schema: format.schema,
        strict: typeof format.strict === 'boolean' ? format.strict : undefined,
      }),
    };
  }
  if (format.type === 'json_object') return { type: 'json_object' };
  return undefined;
}

function toolsToChat(tools: unknown, toolChoice: unknown): Json {
  let functions = asArray(tools).filter(
    (tool): tool is Json => isObject(tool) && tool.type === 'function' && typeof tool.name === 'string',
  );
  let choice: unknown;
  if (toolChoice === 'none' || toolChoice === 'auto' || toolChoice === 'required') {
    choice = toolChoice;
  } else if (isObject(toolChoice) && toolChoice.type === 'function' && typeof toolChoice.name === 'string') {
    choice = { type: 'function', function: { name: toolChoice.name } };
  } else if (isObject(toolChoice) && toolChoice.type === 'allowed_tools') {
    // Chat upstreams other than OpenAI know no allowed_tools: offer only the allowed functions instead.
    const allowed = new Set(
      asArray(toolChoice.tools)
        .filter((tool): tool is Json => isObject(tool) && tool.type === 'function')
        .map((tool) => tool.name),
    );
    functions = functions.filter((tool) => allowed.has(tool.name));
    choice = toolChoice.mode === 'required' ? 'required' : 'auto';
  }
  if (functions.length === 0) return {};
  const chat: Json = {
    tools: functions.map((tool) => ({
      type: 'function',
      function: compact({
        name: tool.name,
        description: asString(tool.description),
        parameters: isObject(tool.parameters) ? tool.parameters : undefined,
        strict: typeof tool.strict === 'boolean' ? tool.strict : undefined,
      }),
    })),
  };
  if (choice !== undefined) chat.tool_choice = choice;
  return chat;
}

// ---------------------------------------------------------------------------------------------------------------
// chat → Responses
// ---------------------------------------------------------------------------------------------------------------

export function chatRequestToResponses(body: Json, _ctx: ConvertContext): Json {
  const n = asNumber(body.n);
  if (n !== undefined && n > 1) {
    throw new ResponsesConversionError('n greater than 1 is not supported for this model: it answers once per request');
  }
  const messages = asArray(body.messages).filter(isObject);
  const instructions: string[] = [];
  let first = 0;
  while (first < messages.length && (messages[first]!.role === 'system' || messages[first]!.role === 'developer')) {
    instructions.push(chatText(messages[first]!.content));
    first++;
  }
  const input: Json[] = [];
  for (const message of messages.slice(first)) appendChatMessage(input, message);

  const request: Json = { model: body.model };
  if (instructions.length > 0) request.instructions = instructions.join('\n\n');
  request.input = input;
  const maxTokens = asNumber(body.max_completion_tokens) ?? asNumber(body.max_tokens);
  if (maxTokens !== undefined) request.max_output_tokens = Math.max(maxTokens, MIN_OUTPUT_TOKENS);
  for (const key of [
    'temperature',
    'top_p',
    'parallel_tool_calls',
    'user',
    'safety_identifier',
    'prompt_cache_key',
    'service_tier',
    'metadata',
  ]) {
    if (body[key] !== undefined && body[key] !== null) request[key] = body[key];
  }
  request.store = typeof body.store === 'boolean' ? body.store : false;
  if (typeof body.reasoning_effort === 'string') request.reasoning = { effort: body.reasoning_effort };
  const format = responseFormatFromChat(body.response_format);
  const verbosity = asString(body.verbosity);
  if (format || verbosity) request.text = compact({ format, verbosity });
  Object.assign(request, toolsFromChat(body));
  if (body.stream === true) request.stream = true;
  return request;
}

function appendChatMessage(input: Json[], message: Json): void {
  switch (message.role) {
    case 'system':
    case 'developer':
      input.push({ type: 'message', role: message.role, content: chatText(message.content) });
      return;
    case 'user':
      input.push({ type: 'message', role: 'user', content: userContentFromChat(message.content) });
      return;
    case 'assistant': {
      const signature = asString(message.reasoning_signature);
      if (signature) {
        const text = asString(message.reasoning_content);
        input.push({
          type: 'reasoning',
          summary: text ? [{ type: 'summary_text', text }] : [],
          encrypted_content: signature,
        });
      }
      const text = chatText(message.content) || (asString(message.refusal) ?? '');
      if (text) input.push({ type: 'message', role: 'assistant', content: text });
      for (const call of asArray(message.tool_calls)) {
        if (!isObject(call) || !isObject(call.function)) continue;
        input.push({
          type: 'function_call',
          call_id: asString(call.id) ?? newId('call'),
          name: asString(call.function.name) ?? '',
          arguments: asJsonText(call.function.arguments),
        });
      }
      return;
    }
    case 'tool':
      input.push({
        type: 'function_call_output',
        call_id: asString(message.tool_call_id) ?? '',
        output: chatText(message.content),
      });
      return;
    default:
      return;
  }
}

/** The text of chat content: a string, or the text parts of an array. */
function chatText(content: unknown): string {
  if (typeof content === 'string') return content;
  return partsText(content, ['text']);
}

function userContentFromChat(content: unknown): unknown {
  if (typeof content === 'string') return content;
  const parts: Json[] = [];
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    switch (part.type) {
      case 'text':
        parts.push({ type: 'input_text', text: asString(part.text) ?? '' });
        break;
      case 'image_url': {
        const url = asString(part.image_url) ?? asString(part.image_url?.url);
        if (url)
          parts.push({ type: 'input_image', image_url: url, detail: asString(part.image_url?.detail) ?? 'auto' });
        break;
      }
      case 'file':
        if (isObject(part.file)) {
          parts.push({
            type: 'input_file',
            ...compact({
              file_data: asString(part.file.file_data),
              file_id: asString(part.file.file_id),
              filename: asString(part.file.filename),
            }),
          });
        }
        break;
      case 'input_audio':
        parts.push({ type: 'input_audio', input_audio: part.input_audio });
        break;
      default:
        break;
    }
  }
  return parts;
}

function responseFormatFromChat(format: unknown): Json | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_schema' && isObject(format.json_schema)) {
    const schema = format.json_schema;
    return compact({
      type: 'json_schema',
      name: asString(schema.name) ?? 'response',
      description: asString(schema.description),
      schema: schema.schema ?? {},
      strict: typeof schema.strict === 'boolean' ? schema.strict : undefined,
    });
  }
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'text') return { type: 'text' };
  return undefined;
}

function toolsFromChat(body: Json): Json {
  const tools: Json[] = [];
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) continue;
    const fn = tool.function;
    tools.push(
      compact({
        type: 'function',
        name: asString(fn.name) ?? '',
        description: asString(fn.description),
        parameters: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
        strict: typeof fn.strict === 'boolean' ? fn.strict : false,
      }),
    );
  }
  if (isObject(body.web_search_options)) {
    const options = body.web_search_options;
    const location = isObject(options.user_location) ? options.user_location : undefined;
    tools.push(
      compact({
        type: 'web_search_preview',
        search_context_size: asString(options.search_context_size),
        user_location: isObject(location?.approximate) ? { type: 'approximate', ...location.approximate } : undefined,
      }),
    );
  }
  const result: Json = {};
  if (tools.length > 0) result.tools = tools;
  const choice = body.tool_choice;
  if (choice === 'none' || choice === 'auto' || choice === 'required') {
    result.tool_choice = choice;
  } else if (isObject(choice) && choice.type === 'function' && isObject(choice.function)) {
    result.tool_choice = { type: 'function', name: choice.function.name };
  } else if (isObject(choice) && choice.type === 'allowed_tools' && isObject(choice.allowed_tools)) {
    result.tool_choice = {
      type: 'allowed_tools',
      mode: choice.allowed_tools.mode === 'required' ? 'required' : 'auto',
      tools: asArray(choice.allowed_tools.tools)
        .filter((tool): tool is Json => isObject(tool) && tool.type === 'function' && isObject(tool.function))
        .map((tool) => ({ type: 'function', name: tool.function.name })),
    };
  }
  return result;
}

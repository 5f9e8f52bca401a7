import type { ConvertContext, Json } from '../../../convert/types.ts';
import { asArray, asNumber, asObject, asString, callId, field, isObject, parseArguments, put } from './fields.ts';
import { hubPartToGemini, mediaPartToHub } from './media.ts';
import { fromGeminiSchema, toGeminiSchema } from './schema.ts';

/**
 * Requests: Gemini generateContent ⇄ OpenAI chat completions (the hub).
 *
 * Gemini has no tool call ids: the hub gives each functionCall of the conversation `call_<n>` (n
 * counting calls from the start, so the same history always gets the same ids) and a functionResponse
 * answers the earliest unanswered call of its name. Going the other way, a tool message takes the name
 * of the call its tool_call_id points to.
 */

// ---------------------------------------------------------------------------------------------
// Gemini → hub

export function geminiRequestToHub(body: Json, ctx: ConvertContext): Json {
  const messages: Json[] = [];
  const system = systemTexts(field(body, 'systemInstruction'));
  if (system.length > 0) {
    messages.push({
      role: 'system',
      content: system.length === 1 ? system[0] : system.map((text) => ({ type: 'text', text })),
    });
  }
  messages.push(...contentsToMessages(asArray(field(body, 'contents'))));

  const hub: Json = { model: ctx.model, messages, stream: ctx.stream };
  if (ctx.stream) hub.stream_options = { include_usage: true };
  toolsToHub(body, hub);
  generationConfigToHub(asObject(field(body, 'generationConfig')) ?? {}, hub);
  return hub;
}

function systemTexts(system: unknown): string[] {
  if (typeof system === 'string') return system === '' ? [] : [system];
  return asArray(asObject(system)?.parts)
    .map((part) => asString(asObject(part)?.text))
    .filter((text): text is string => text !== undefined && text !== '');
}

interface CallRecord {
  id: string;
  name: string;
  answered: boolean;
}

function contentsToMessages(contents: unknown[]): Json[] {
  const messages: Json[] = [];
  const calls: CallRecord[] = [];
  let counter = 0;
  for (const entry of contents) {
    const content = asObject(entry);
    if (!content) continue;
    const parts = asArray(content.parts).filter(isObject);
    if (content.role === 'model') {
      const message = modelMessage(parts, () => callId(counter++));
      for (const call of message.tool_calls ?? [])
        calls.push({ id: call.id, name: call.function.name, answered: false });
      messages.push(message);
      continue;
    }
    // user (or the older `function` role): tool results first, as OpenAI wants them right after the call.
    const userParts: Json[] = [];
    for (const part of parts) {
      const response = asObject(field(part, 'functionResponse'));
      if (response) {
        const name = asString(response.name) ?? '';
        const id = asString(response.id);
        const call =
          calls.find((c) => !c.answered && id !== undefined && c.id === id) ??
          calls.find((c) => !c.answered && c.name === name) ??
          calls.find((c) => !c.answered);
        if (call) call.answered = true;
        messages.push({
          role: 'tool',
          tool_call_id: call?.id ?? id ?? callId(counter++),
          content: toolContentFromGemini(response.response),
        });
        continue;
      }
      if (typeof part.text === 'string') {
        userParts.push({ type: 'text', text: part.text });
        continue;
      }
      const media = mediaPartToHub(part);
      if (media) userParts.push(media);
    }
    if (userParts.length === 0) continue;
    const only = userParts[0]!;
    messages.push({
      role: 'user',
      content: userParts.length === 1 && only.type === 'text' ? only.text : userParts,
    });
  }
  return messages;
}

/**
 * A model turn as an assistant message: text, thoughts, calls and the thought signature. With
 * `renderOutputs` (answers, not history), generated images and executed code become text too.
 */
export function modelMessage(parts: Json[], nextId: () => string, renderOutputs = false): Json {
  let text = '';
  let reasoning = '';
  let signature: string | undefined;
  let callSignature: string | undefined;
  const toolCalls: Json[] = [];
  for (const part of parts) {
    const partSignature = asString(field(part, 'thoughtSignature'));
    if (partSignature) signature = partSignature;
    const call = asObject(field(part, 'functionCall'));
    if (call) {
      const id = asString(call.id) ?? nextId();
      toolCalls.push({
        id,
        type: 'function',
        function: { name: asString(call.name) ?? '', arguments: JSON.stringify(call.args ?? {}) },
      });
      if (partSignature && callSignature === undefined) callSignature = partSignature;
      continue;
    }
    if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else text += part.text;
    } else if (renderOutputs) {
      text += renderOutput(part);
    }
  }
  const message: Json = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (reasoning !== '') message.reasoning_content = reasoning;
  const kept = callSignature ?? signature;
  if (kept) message.reasoning_signature = kept;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/** An answer part that is neither text nor a call, as markdown: an image, code and its result. */
function renderOutput(part: Json): string {
  const inline = asObject(field(part, 'inlineData'));
  if (inline) {
    const mimeType = asString(field(inline, 'mimeType')) ?? 'application/octet-stream';
    return `![image](data:${mimeType};base64,${asString(inline.data) ?? ''})`;
  }
  const code = asObject(field(part, 'executableCode'));
  if (code) return `\n\`\`\`${(asString(code.language) ?? '').toLowerCase()}\n${asString(code.code) ?? ''}\n\`\`\`\n`;
  const result = asObject(field(part, 'codeExecutionResult'));
  if (result) return `\n\`\`\`\n${asString(result.output) ?? ''}\n\`\`\`\n`;
  return '';
}

/** A functionResponse's `response` as tool message text (its `output` alone when that is all it says). */
function toolContentFromGemini(response: unknown): string {
  const object = asObject(response);
  if (object && Object.keys(object).length === 1 && 'output' in object) {
    return typeof object.output === 'string' ? object.output : JSON.stringify(object.output);
  }
  return JSON.stringify(response ?? {});
}

function toolsToHub(body: Json, hub: Json): void {
  const tools: Json[] = [];
  for (const tool of asArray(body.tools)) {
    for (const declaration of asArray(field(tool, 'functionDeclarations'))) {
      if (!isObject(declaration)) continue;
      const fn: Json = { name: asString(declaration.name) ?? '' };
      put(fn, 'description', asString(declaration.description));
      fn.parameters = asObject(field(declaration, 'parametersJsonSchema')) ??
        fromGeminiSchema(declaration.parameters) ?? { type: 'object', properties: {} };
      tools.push({ type: 'function', function: fn });
    }
    if (field(tool, 'googleSearch') !== undefined || field(tool, 'googleSearchRetrieval') !== undefined) {
      hub.web_search_options = {};
    }
  }
  if (tools.length > 0) hub.tools = tools;

  const config = asObject(field(asObject(field(body, 'toolConfig')), 'functionCallingConfig'));
  const mode = asString(config?.mode)?.toUpperCase();
  if (!config || !mode) return;
  const names = asArray(field(config, 'allowedFunctionNames')).filter((name) => typeof name === 'string');
  if (mode === 'NONE') hub.tool_choice = 'none';
  else if (mode === 'AUTO' || mode === 'VALIDATED') hub.tool_choice = 'auto';
  else if (mode === 'ANY') {
    if (names.length === 1) hub.tool_choice = { type: 'function', function: { name: names[0] } };
    else if (names.length > 1) {
      hub.tool_choice = {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: names.map((name) => ({ type: 'function', function: { name } })) },
      };
    } else hub.tool_choice = 'required';
  }
}

/** thinkingBudget → reasoning_effort: the effort whose budget (below) the client's is closest to. */
function effortForBudget(budget: number): string | undefined {
  if (budget <= 0) return undefined; // 0 is "off", -1 "let the model decide": leave the upstream's default.
  if (budget <= 1024) return 'low';
  if (budget <= 8192) return 'medium';
  return 'high';
}

function generationConfigToHub(config: Json, hub: Json): void {
  put(hub, 'temperature', asNumber(config.temperature));
  put(hub, 'top_p', asNumber(field(config, 'topP')));
  put(hub, 'max_tokens', asNumber(field(config, 'maxOutputTokens')));
  const stop = asArray(field(config, 'stopSequences')).filter((s) => typeof s === 'string');
  if (stop.length > 0) hub.stop = stop;
  put(hub, 'n', asNumber(field(config, 'candidateCount')));
  put(hub, 'seed', asNumber(config.seed));
  put(hub, 'presence_penalty', asNumber(field(config, 'presencePenalty')));
  put(hub, 'frequency_penalty', asNumber(field(config, 'frequencyPenalty')));
  if (field(config, 'responseLogprobs') === true) hub.logprobs = true;
  put(hub, 'top_logprobs', asNumber(config.logprobs));

  const mime = asString(field(config, 'responseMimeType'));
  const jsonSchema = asObject(field(config, 'responseJsonSchema'));
  const schema = jsonSchema ?? fromGeminiSchema(field(config, 'responseSchema'));
  if (schema) {
    hub.response_format = { type: 'json_schema', json_schema: { name: 'response', schema } };
  } else if (mime === 'application/json') {
    hub.response_format = { type: 'json_object' };
  }

  const thinking = asObject(field(config, 'thinkingConfig'));
  const level = asString(field(thinking, 'thinkingLevel'));
  const budget = asNumber(field(thinking, 'thinkingBudget'));
  const effort =
    level && level !== 'THINKING_LEVEL_UNSPECIFIED'
      ? level.toLowerCase()
      : budget === undefined
        ? undefined
        : effortForBudget(budget);
  put(hub, 'reasoning_effort', effort);
}

// ---------------------------------------------------------------------------------------------
// hub → Gemini

/** Thinking budgets for OpenAI's reasoning efforts (the top one is 2.5 Flash's largest budget). */
const BUDGET_FOR_EFFORT: Record<string, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };

export function hubRequestToGemini(body: Json, _ctx: ConvertContext): Json {
  const contents: Json[] = [];
  const systemParts: Json[] = [];
  const callNames = new Map<string, string>();
  const add = (role: string, parts: Json[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const entry of asArray(body.messages)) {
    const message = asObject(entry);
    if (!message) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        systemParts.push(...textsOf(message.content).map((text) => ({ text })));
        break;
      case 'assistant':
        add('model', assistantParts(message, callNames));
        break;
      case 'tool':
      case 'function': {
        const id = asString(message.tool_call_id);
        const name = (id !== undefined ? callNames.get(id) : undefined) ?? asString(message.name) ?? '';
        add('user', [{ functionResponse: { name, response: toolResponseForGemini(message.content) } }]);
        break;
      }
      default:
        add('user', userParts(message.content));
    }
  }

  const out: Json = { contents };
  if (systemParts.length > 0) out.systemInstruction = { parts: systemParts };
  toolsToGemini(body, out);
  const config = generationConfigToGemini(body);
  if (Object.keys(config).length > 0) out.generationConfig = config;
  return out;
}

function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return content === '' ? [] : [content];
  return asArray(content)
    .map((part) => (typeof part === 'string' ? part : asString(asObject(part)?.text)))
    .filter((text): text is string => text !== undefined && text !== '');
}

function userParts(content: unknown): Json[] {
  if (typeof content === 'string') return [{ text: content }];
  return asArray(content)
    .map(hubPartToGemini)
    .filter((part): part is Json => part !== undefined);
}

export function assistantParts(message: Json, callNames: Map<string, string>): Json[] {
  const parts: Json[] = [];
  const reasoning = asString(message.reasoning_content);
  if (reasoning) parts.push({ text: reasoning, thought: true });
  for (const text of textsOf(message.content)) parts.push({ text });
  const calls: Json[] = [];
  for (const call of asArray(message.tool_calls)) {
    const fn = asObject(asObject(call)?.function);
    if (!fn) continue;
    const name = asString(fn.name) ?? '';
    const id = asString(call.id);
    if (id !== undefined) callNames.set(id, name);
    calls.push({ functionCall: { name, args: parseArguments(fn.arguments) } });
  }
  parts.push(...calls);
  const signature = asString(message.reasoning_signature);
  const carrier = calls[0] ?? parts.at(-1);
  if (signature && carrier) carrier.thoughtSignature = signature;
  return parts;
}

/** A tool message's content as a functionResponse `response` object: JSON objects as they are, else `output`. */
function toolResponseForGemini(content: unknown): Json {
  const text = typeof content === 'string' ? content : textsOf(content).join('');
  try {
    const parsed = JSON.parse(text);
    if (isObject(parsed)) return parsed;
    return { output: parsed };
  } catch {
    return { output: text };
  }
}

function toolsToGemini(body: Json, out: Json): void {
  const declarations: Json[] = [];
  for (const tool of asArray(body.tools)) {
    const fn = asObject(asObject(tool)?.function);
    if (!fn || (tool.type !== undefined && tool.type !== 'function')) continue;
    const declaration: Json = { name: asString(fn.name) ?? '' };
    put(declaration, 'description', asString(fn.description));
    const parameters = toGeminiSchema(fn.parameters);
    // Gemini refuses an OBJECT without properties: a function without arguments has no parameters.
    const empty =
      parameters?.type === 'OBJECT' &&
      (!isObject(parameters.properties) || Object.keys(parameters.properties).length === 0);
    if (parameters && !empty) declaration.parameters = parameters;
    declarations.push(declaration);
  }
  const tools: Json[] = [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  if (body.web_search_options !== undefined) tools.push({ googleSearch: {} });
  if (tools.length > 0) out.tools = tools;

  const choice = body.tool_choice;
  let config: Json | undefined;
  if (choice === 'none') config = { mode: 'NONE' };
  else if (choice === 'auto') config = { mode: 'AUTO' };
  else if (choice === 'required') config = { mode: 'ANY' };
  else if (isObject(choice) && choice.type === 'function') {
    const name = asString(asObject(choice.function)?.name);
    config = name ? { mode: 'ANY', allowedFunctionNames: [name] } : { mode: 'ANY' };
  } else if (isObject(choice) && choice.type === 'allowed_tools') {
    const allowed = asObject(choice.allowed_tools);
    const names = asArray(allowed?.tools)
      .map((t) => asString(asObject(asObject(t)?.function)?.name))
      .filter((name): name is string => name !== undefined);
    config = allowed?.mode === 'required' ? { mode: 'ANY', allowedFunctionNames: names } : { mode: 'AUTO' };
  }
  if (config) out.toolConfig = { functionCallingConfig: config };
}

function generationConfigToGemini(body: Json): Json {
  const config: Json = {};
  put(config, 'temperature', asNumber(body.temperature));
  put(config, 'topP', asNumber(body.top_p));
  put(config, 'topK', asNumber(body.top_k));
  put(config, 'maxOutputTokens', asNumber(body.max_completion_tokens) ?? asNumber(body.max_tokens));
  const stop = typeof body.stop === 'string' ? [body.stop] : asArray(body.stop).filter((s) => typeof s === 'string');
  if (stop.length > 0) config.stopSequences = stop;
  put(config, 'candidateCount', asNumber(body.n));
  put(config, 'seed', asNumber(body.seed));
  put(config, 'presencePenalty', asNumber(body.presence_penalty));
  put(config, 'frequencyPenalty', asNumber(body.frequency_penalty));
  if (body.logprobs === true) config.responseLogprobs = true;
  put(config, 'logprobs', asNumber(body.top_logprobs));

  const format = asObject(body.response_format);
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    put(config, 'responseSchema', toGeminiSchema(asObject(format.json_schema)?.schema));
  } else if (format?.type === 'json_object') {
    config.responseMimeType = 'application/json';
  }

  const effort = asString(body.reasoning_effort);
  if (effort === 'none') config.thinkingConfig = { thinkingBudget: 0 };
  else if (effort && BUDGET_FOR_EFFORT[effort] !== undefined) {
    config.thinkingConfig = { includeThoughts: true, thinkingBudget: BUDGET_FOR_EFFORT[effort] };
  }
  return config;
}

import type { ConvertContext, Json } from '../../../convert/types.ts';
import { messageText } from '../../hub-request.ts';

const list = (value: unknown): any[] => (Array.isArray(value) ? value : []);

function messageToTencent(message: Json): Json {
  const role = message.role === 'developer' ? 'system' : String(message.role ?? 'user');
  const out: Json = { Role: role, Content: messageText(message.content, '') };
  if (role === 'tool') out.ToolCallId = String(message.tool_call_id ?? '');
  const calls = list(message.tool_calls).filter((call) => call?.function);
  if (calls.length > 0) {
    out.ToolCalls = calls.map((call) => ({
      Id: String(call.id ?? ''),
      Type: 'function',
      Function: { Name: String(call.function.name ?? ''), Arguments: String(call.function.arguments ?? '{}') },
    }));
  }
  return out;
}

/** A hub tool as Hunyuan's, whose parameters are a JSON schema serialised into a string. */
function toolToTencent(tool: Json): Json {
  const fn = tool.function ?? {};
  const out: Json = {
    Type: 'function',
    Function: { Name: String(fn.name ?? ''), Parameters: JSON.stringify(fn.parameters ?? { type: 'object' }) },
  };
  if (typeof fn.description === 'string') out.Function.Description = fn.description;
  return out;
}

/** A hub (OpenAI chat) request as a Hunyuan ChatCompletions body. */
export function hubRequestToTencent(body: Json, ctx: ConvertContext): Json {
  const out: Json = {
    Model: ctx.upstreamModel,
    Messages: list(body.messages).map(messageToTencent),
    Stream: body.stream === true,
  };
  if (typeof body.temperature === 'number') out.Temperature = body.temperature;
  if (typeof body.top_p === 'number') out.TopP = body.top_p;
  if (typeof body.seed === 'number') out.Seed = body.seed;
  const tools = list(body.tools).filter((tool) => tool?.type === 'function');
  if (tools.length > 0) {
    out.Tools = tools.map(toolToTencent);
    const choice = body.tool_choice;
    if (choice === 'none' || choice === 'auto') out.ToolChoice = choice;
    else if (typeof choice === 'object' && choice?.function?.name) {
      // A named function is Hunyuan's `custom` choice, the tool itself given again.
      const named = tools.find((tool) => tool.function?.name === choice.function.name);
      if (named) Object.assign(out, { ToolChoice: 'custom', CustomTool: toolToTencent(named) });
    }
  }
  return out;
}

/**
 * A coding agent's turn as a mock upstream plays it: the model asks the client to run its shell tool,
 * and answers with final text only once the tool result comes back holding what the command printed.
 * The mocks of each protocol read the tool offer and the tool results in their own shapes and hand
 * them here, so every protocol plays the same script.
 */
export interface AgentScript {
  /** The tool to call, by the name the client offers it under (Claude Code: Bash; Codex: exec_command). */
  tool: string;
  /** Its arguments. */
  input: Record<string, unknown>;
  /** What the tool result must contain: the command's output, which the command text itself does not hold. */
  expect: string;
  /** The final answer, sent once the expected tool result arrived. */
  answer: string;
  /** Every tool result the mock received for its call, in order (filled in by the mock). */
  results: string[];
}

/** The id of the one tool call a script makes; the tool result must come back under it. */
export const AGENT_CALL_ID = 'call_tollgate_agent_1';

export type AgentStep =
  | { kind: 'call'; id: string; name: string; input: Record<string, unknown> }
  | { kind: 'answer'; text: string };

/**
 * What the model does next in a request that offers `offered` tools and carries `result` (the text
 * of the tool result for {@link AGENT_CALL_ID}, if any): undefined when the request is not the
 * agent's (a side request that offers no such tool), so the mock answers it as usual.
 */
export function agentStep(
  script: AgentScript | undefined,
  offered: string[],
  result: string | undefined,
): AgentStep | undefined {
  if (!script || !offered.includes(script.tool)) return undefined;
  if (result === undefined) return { kind: 'call', id: AGENT_CALL_ID, name: script.tool, input: script.input };
  script.results.push(result);
  return {
    kind: 'answer',
    text: result.includes(script.expect)
      ? script.answer
      : `The tool result did not hold the command's output ${JSON.stringify(script.expect)}.`,
  };
}

/** The text of a tool result, whether a string or a list of text parts (any protocol's spelling). */
export function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

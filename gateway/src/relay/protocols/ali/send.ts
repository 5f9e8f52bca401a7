import { setTimeout as sleep } from 'node:timers/promises';
import type { UpstreamResponse } from '../../transport.ts';
import { jsonAnswer, jsonAnswerText } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { IMAGE_SYNTHESIS_PATH } from './request.ts';

/** How long an image job is waited for, and the pause between polls (doubling up to the cap). */
export const IMAGE_TASK_LIMITS = { maxWaitMs: 5 * 60 * 1000, firstPollMs: 500, maxPollMs: 5000 };

const FAILED: ReadonlySet<string> = new Set(['FAILED', 'CANCELED', 'UNKNOWN']);

/**
 * Text-to-image is a job on DashScope: the POST answers a task id, and `GET /api/v1/tasks/{id}` is
 * polled until the task has SUCCEEDED (its answer is then the relay's answer) or failed. The wait is
 * bounded and ends when the client goes away.
 */
export async function sendAli(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  const response = await input.transport.send(request, input.signal);
  const url = new URL(request.url);
  if (!url.pathname.endsWith(IMAGE_SYNTHESIS_PATH) || response.status >= 400) return response;
  const created = await jsonAnswerText(response);
  if (created === undefined) return response;
  const taskId = (parsed(created) as { output?: { task_id?: unknown } } | undefined)?.output?.task_id;
  if (typeof taskId !== 'string') return jsonAnswer(response.status, created);
  const taskUrl = `${url.origin}${url.pathname.slice(0, -IMAGE_SYNTHESIS_PATH.length)}/api/v1/tasks/${encodeURIComponent(taskId)}`;
  // The create call's headers (the key, a workspace from the header override) without its body's.
  const { 'content-type': _type, 'x-dashscope-async': _async, ...headers } = request.headers;
  const poll: UpstreamRequest = { url: taskUrl, method: 'GET', headers };
  const deadline = Date.now() + IMAGE_TASK_LIMITS.maxWaitMs;
  let pause = IMAGE_TASK_LIMITS.firstPollMs;
  while (Date.now() + pause <= deadline) {
    await sleep(pause, undefined, { signal: input.signal });
    pause = Math.min(pause * 2, IMAGE_TASK_LIMITS.maxPollMs);
    const polled = await input.transport.send(poll, input.signal);
    const answer = await jsonAnswerText(polled);
    if (answer === undefined) return polled;
    if (polled.status >= 400) return jsonAnswer(polled.status, answer);
    const task = parsed(answer) as { output?: { task_status?: unknown; code?: unknown; message?: unknown } };
    const status = String(task?.output?.task_status ?? '');
    if (status === 'SUCCEEDED') return jsonAnswer(polled.status, answer);
    if (FAILED.has(status)) {
      const code = typeof task.output?.code === 'string' ? task.output.code : `Task${status}`;
      const message = typeof task.output?.message === 'string' ? task.output.message : `image task ${taskId} ${status}`;
      return jsonAnswer(code === 'DataInspectionFailed' ? 400 : 502, { code, message });
    }
  }
  return jsonAnswer(504, {
    code: 'TaskTimeout',
    message: `image task ${taskId} did not finish within ${IMAGE_TASK_LIMITS.maxWaitMs / 1000}s`,
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

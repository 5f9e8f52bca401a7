import type { MidjourneyRow, TaskRow } from '../../store/repositories/tasks.ts';

/** A drawing task as stored (it holds nothing private); administrators also get the owner's username. */
export type MidjourneyView = MidjourneyRow & { username?: string };

/** A creative task without `private_data` (billing context); `properties` and `data` as JSON values. */
export type TaskView = Omit<TaskRow, 'private_data' | 'properties' | 'data'> & {
  properties: unknown;
  data: unknown;
  username?: string;
};

/** JSON text as a value; empty or unreadable text is null. */
function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function midjourneyView(row: MidjourneyRow, username?: string): MidjourneyView {
  return username === undefined ? { ...row } : { ...row, username };
}

export function taskView(row: TaskRow, username?: string): TaskView {
  const { private_data: _private, properties, data, ...rest } = row;
  const view: TaskView = { ...rest, properties: parseJson(properties), data: parseJson(data) };
  if (username !== undefined) view.username = username;
  return view;
}

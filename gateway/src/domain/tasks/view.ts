import type { MidjourneyRow, TaskRow } from '../../store/repositories/tasks.ts';

/**
 * A drawing task as stored, without the index of the channel key that took it (the gateway's routing,
 * not part of the task's new-api shape); administrators also get the owner's username.
 */
export type MidjourneyView = Omit<MidjourneyRow, 'key_index'> & { username?: string };

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

/**
 * A drawing task for the log. With `imageBase` (MjForwardUrlEnabled: the ServerAddress, possibly empty) the
 * image URL is this gateway's /mj/image/{id}, which proxies the upstream's image, as relay clients see it.
 */
export function midjourneyView(row: MidjourneyRow, username?: string, imageBase?: string): MidjourneyView {
  const { key_index: _key, ...rest } = row;
  const view: MidjourneyView = rest;
  if (imageBase !== undefined && row.image_url) view.image_url = `${imageBase}/mj/image/${row.mj_id}`;
  if (username !== undefined) view.username = username;
  return view;
}

export function taskView(row: TaskRow, username?: string): TaskView {
  const { private_data: _private, properties, data, ...rest } = row;
  const view: TaskView = { ...rest, properties: parseJson(properties), data: parseJson(data) };
  if (username !== undefined) view.username = username;
  return view;
}

import type { LogService } from '../../domain/logs/index.ts';
import type { TaskService } from '../../domain/tasks/index.ts';
import { idsFilter, numberFilter, type RestFilters, type RestResource, textFilter } from '../resource.ts';

/** Read-only resources: administrators see every row, users their own (the domain scopes by actor). */
const readOnly = { guard: 'user' as const };

const id = (f: RestFilters | undefined) => idsFilter(f);

export function logResource(logs: LogService): RestResource {
  return {
    ...readOnly,
    list(query, actor) {
      const f = query.filters;
      return logs.list(
        {
          ...query,
          filters: {
            id: id(f),
            type: numberFilter(f, 'type'),
            username: textFilter(f, 'username'),
            user_id: numberFilter(f, 'user_id'),
            token_name: textFilter(f, 'token_name'),
            model_name: textFilter(f, 'model_name') ?? textFilter(f, 'q'),
            start_timestamp: numberFilter(f, 'start_timestamp'),
            end_timestamp: numberFilter(f, 'end_timestamp'),
            channel: numberFilter(f, 'channel'),
            group: textFilter(f, 'group'),
          },
        },
        actor,
      );
    },
    getOne: (logId, actor) => logs.get(logId, actor),
  };
}

export function midjourneyResource(tasks: TaskService): RestResource {
  return {
    ...readOnly,
    list(query, actor) {
      const f = query.filters;
      return tasks.listMidjourney(
        {
          ...query,
          filters: {
            id: id(f),
            user_id: numberFilter(f, 'user_id'),
            channel_id: numberFilter(f, 'channel_id'),
            mj_id: textFilter(f, 'mj_id') ?? textFilter(f, 'q'),
            start_timestamp: numberFilter(f, 'start_timestamp'),
            end_timestamp: numberFilter(f, 'end_timestamp'),
          },
        },
        actor,
      );
    },
    getOne: (taskId, actor) => tasks.getMidjourney(taskId, actor),
  };
}

export function taskResource(tasks: TaskService): RestResource {
  return {
    ...readOnly,
    list(query, actor) {
      const f = query.filters;
      return tasks.listTasks(
        {
          ...query,
          filters: {
            id: id(f),
            user_id: numberFilter(f, 'user_id'),
            channel_id: numberFilter(f, 'channel_id'),
            task_id: textFilter(f, 'task_id') ?? textFilter(f, 'q'),
            platform: textFilter(f, 'platform'),
            action: textFilter(f, 'action'),
            status: textFilter(f, 'status'),
            start_timestamp: numberFilter(f, 'start_timestamp'),
            end_timestamp: numberFilter(f, 'end_timestamp'),
          },
        },
        actor,
      );
    },
    getOne: (taskId, actor) => tasks.getTask(taskId, actor),
  };
}

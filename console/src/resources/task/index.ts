import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const TaskList = lazyNamed(() => import('./TaskList.tsx'), 'TaskList');

/** The creative task log (spec doc 3 §2 "Task log page") on /rest/task. */
export const taskResource: ResourceProps = {
  name: 'task',
  list: TaskList,
};

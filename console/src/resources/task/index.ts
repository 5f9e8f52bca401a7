import type { ResourceProps } from 'react-admin';
import { TaskList } from './TaskList.tsx';

/** The creative task log (spec doc 3 §2 "Task log page") on /rest/task. */
export const taskResource: ResourceProps = {
  name: 'task',
  list: TaskList,
};

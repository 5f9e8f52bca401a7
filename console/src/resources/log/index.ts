import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const LogList = lazyNamed(() => import('./LogList.tsx'), 'LogList');

/** The usage log (spec doc 3 §2 "Usage log page") on /rest/log: everyone's for administrators, own for users. */
export const logResource: ResourceProps = {
  name: 'log',
  list: LogList,
};

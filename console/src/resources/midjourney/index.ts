import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const MidjourneyList = lazyNamed(() => import('./MidjourneyList.tsx'), 'MidjourneyList');

/** The drawing log (spec doc 3 §2 "Drawing log page") on /rest/midjourney. */
export const midjourneyResource: ResourceProps = {
  name: 'midjourney',
  list: MidjourneyList,
};

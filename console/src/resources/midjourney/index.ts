import type { ResourceProps } from 'react-admin';
import { MidjourneyList } from './MidjourneyList.tsx';

/** The drawing log (spec doc 3 §2 "Drawing log page") on /rest/midjourney. */
export const midjourneyResource: ResourceProps = {
  name: 'midjourney',
  list: MidjourneyList,
};

import Redeem from '@mui/icons-material/Redeem';
import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const RedemptionList = lazyNamed(() => import('./RedemptionList.tsx'), 'RedemptionList');

/** The `redemption` resource (spec doc 2 §2 "Redemption codes page"): create and edit are drawers of the list. */
export const redemptionResource: ResourceProps = {
  name: 'redemption',
  list: RedemptionList,
  icon: Redeem,
  recordRepresentation: 'name',
};

import Redeem from '@mui/icons-material/Redeem';
import type { ResourceProps } from 'react-admin';
import { RedemptionList } from './RedemptionList.tsx';

/** The `redemption` resource (spec doc 2 §2 "Redemption codes page"): create and edit are drawers of the list. */
export const redemptionResource: ResourceProps = {
  name: 'redemption',
  list: RedemptionList,
  icon: Redeem,
  recordRepresentation: 'name',
};

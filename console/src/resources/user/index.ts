import People from '@mui/icons-material/People';
import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const UserList = lazyNamed(() => import('./UserList.tsx'), 'UserList');
const UserEditPage = lazyNamed(() => import('./UserList.tsx'), 'UserEditPage');

/**
 * The `user` resource (spec doc 1 §2 "User management screen"). Adding is a drawer of the list; editing
 * is the spec's /user/edit/:id (and /user/edit for oneself), pages in routes.tsx rendering UserEditPage.
 */
export const userResource: ResourceProps = {
  name: 'user',
  list: UserList,
  icon: People,
  recordRepresentation: 'username',
};

export { UserEditPage };

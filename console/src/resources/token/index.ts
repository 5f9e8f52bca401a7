import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const TokenList = lazyNamed(() => import('./TokenList.tsx'), 'TokenList');
const TokenCreate = lazyNamed(() => import('./TokenForm.tsx'), 'TokenCreate');
const TokenEdit = lazyNamed(() => import('./TokenForm.tsx'), 'TokenEdit');

/** API tokens (spec doc 2 §2 "Tokens page"): the signed-in user's own keys on /rest/token. */
export const tokenResource: ResourceProps = {
  name: 'token',
  list: TokenList,
  create: TokenCreate,
  edit: TokenEdit,
  recordRepresentation: 'name',
};

import type { ResourceProps } from 'react-admin';
import { TokenCreate, TokenEdit } from './TokenForm.tsx';
import { TokenList } from './TokenList.tsx';

/** API tokens (spec doc 2 §2 "Tokens page"): the signed-in user's own keys on /rest/token. */
export const tokenResource: ResourceProps = {
  name: 'token',
  list: TokenList,
  create: TokenCreate,
  edit: TokenEdit,
  recordRepresentation: 'name',
};

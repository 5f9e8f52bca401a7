export { TOKEN_ERRORS } from './errors.ts';
export { bareKey, generateKey, KEY_PREFIX } from './keys.ts';
export { effectiveTokenStatus } from './rules.ts';
export {
  type TokenActor,
  type TokenCreate,
  type TokenFilters,
  type TokenInput,
  TokenService,
  type TokenUpdate,
} from './service.ts';
export { type TokenView, tokenView } from './view.ts';

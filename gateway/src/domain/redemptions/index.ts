export { REDEMPTION_ERRORS } from './errors.ts';
export {
  type RedemptionCreate,
  type RedemptionFilters,
  RedemptionService,
  type RedemptionUpdate,
} from './service.ts';
export { type RedemptionView, redemptionView } from './view.ts';

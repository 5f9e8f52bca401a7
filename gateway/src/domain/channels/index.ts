export {
  CHANNEL_SORT_FIELDS,
  type ChannelFilters,
  type ChannelSortField,
} from '../../store/repositories/channels.ts';
export { abilitiesOf, rebuildAbilities, syncAbilities } from './abilities.ts';
export { CHANNEL_ERRORS } from './errors.ts';
export {
  CHANNEL_DEFAULTS,
  CHANNEL_STATUS,
  type ChannelConfig,
  type ChannelInput,
  type ChannelWarning,
} from './input.ts';
export { type ChannelInfo, channelInfoFor, type MultiKeyMode, readChannelInfo, splitKeys } from './keys.ts';
export {
  CHANNEL_TYPES,
  type ChannelType,
  channelType,
  knownModels,
  modelsByChannelType,
  type Protocol,
  typeLabel,
} from './registry.ts';
export {
  type BalanceRefreshSummary,
  CHANNELS_CHANNEL,
  type ChannelCreateInput,
  type ChannelListQuery,
  type ChannelPageQuery,
  ChannelService,
  type ChannelServiceDeps,
  type ChannelUpdateInput,
  type CreateMode,
  type ProtocolModelLister,
  type ProtocolModelQuery,
  type TagEdit,
  type UpstreamGroupObservation,
} from './service.ts';
export { type ChannelRow, type ChannelView, channelView } from './view.ts';

export {
  DEFAULT_AUDIO_COMPLETION_RATIO,
  DEFAULT_AUDIO_RATIO,
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_CREATE_CACHE_RATIO,
  DEFAULT_IMAGE_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from './default-prices.ts';
export {
  type BooleanOptionKey,
  findOptionDefinition,
  isOptionKey,
  type JsonOptionKey,
  looksSecret,
  type NumericOptionKey,
  OPTION_DEFINITIONS,
  type OptionDefinition,
  type OptionKey,
  type OptionKeyOfType,
  type OptionType,
  PUBLIC_DESPITE_NAME,
} from './definitions.ts';
export { optionErrors } from './errors.ts';
export {
  type ManagedResource,
  OPTIONS_CHANNEL,
  type OptionChange,
  type OptionChangeListener,
  type OptionEntries,
  type OptionsLogger,
  OptionsService,
  type OptionsServiceConfig,
  type SetOptionOptions,
} from './service.ts';
export { checkShape, type Shape, type ShapeMismatch, shape } from './shapes.ts';
export {
  formatStatusCodeRanges,
  type ParsedStatusCodeRanges,
  parseStatusCodeRanges,
  type StatusCodeRange,
  statusCodeInRanges,
} from './status-code-ranges.ts';
export { validateOption } from './validate.ts';

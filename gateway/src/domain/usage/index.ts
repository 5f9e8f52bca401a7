export {
  buildConsumeOther,
  buildErrorOther,
  type ConsumeOther,
  type ConsumeOtherInput,
  type ErrorOther,
  type ErrorOtherInput,
  logModelName,
  type StreamOutcome,
  type Surcharges,
} from './other.ts';
export { UsageRecorder, UsageRecorderClosedError, type UsageRecorderConfig } from './recorder.ts';
export { usageSettings } from './settings.ts';
export type {
  ConsumeRecord,
  ErrorRecord,
  FlushReport,
  UsageBatch,
  UsageLogger,
  UsageRecordBase,
  UsageSettings,
  UsageStats,
  UsageWriter,
} from './types.ts';
export { databaseUsageWriter, writeUsageBatch } from './writer.ts';

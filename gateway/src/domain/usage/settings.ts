import type { OptionsService } from '../options/service.ts';
import type { UsageSettings } from './types.ts';

/**
 * The recorder's switches from the options (LogConsumeEnabled, DataExportEnabled, read per record, so an
 * admin's change applies to the next request on every pod; DataExportInterval, read when buckets start
 * waiting for their export) and ERROR_LOG_ENABLED from the environment,
 * default false: new-api has it as an environment variable, and error logs can be many on a bad day.
 */
export function usageSettings(
  options: Pick<OptionsService, 'getBoolean' | 'getNumber'>,
  errorLogEnabled: boolean,
): UsageSettings {
  return {
    logConsumeEnabled: () => options.getBoolean('LogConsumeEnabled'),
    dataExportEnabled: () => options.getBoolean('DataExportEnabled'),
    dataExportIntervalMs: () => options.getNumber('DataExportInterval') * 60_000,
    errorLogEnabled: () => errorLogEnabled,
  };
}

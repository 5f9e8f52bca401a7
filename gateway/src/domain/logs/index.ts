export { type Actor, isAdmin } from './actor.ts';
export { csvField, csvLine } from './csv.ts';
export { LOG_ERRORS } from './errors.ts';
export { type LogFilters, scopeLogQuery } from './filters.ts';
export { LogMaintenance, type LogMaintenanceConfig } from './retention.ts';
export {
  type LogList,
  LogService,
  type LogServiceConfig,
  type LogStat,
  type LogView,
} from './service.ts';
export { type AdminLogView, adminLogView, type UserLogView, userLogView, userOther } from './view.ts';

export { type UptimeGroup, uptimeGroups } from './groups.ts';
export { type UptimeGroupResult, type UptimeMonitor, UptimeService } from './service.ts';

export { CHECKIN_ERRORS } from './errors.ts';
export { type CheckinRecord, CheckinService, type CheckinStats } from './service.ts';

export { defaultFormatQuota, LEDGER_ERRORS, USER_QUOTA_BELOW_RESERVE } from './errors.ts';
export type {
  ChargeBalances,
  LedgerLogger,
  LedgerStats,
  QuotaLedgerConfig,
  Reservation,
  ReserveRequest,
} from './ledger.ts';
export { QuotaLedger } from './ledger.ts';
export type { LeaseSweeper, LeaseSweeperConfig } from './sweeper.ts';
export { startLeaseSweeper } from './sweeper.ts';

import type { RedemptionRow } from '../../store/repositories/redemptions.ts';

/** A code as administrators see it (spec doc 2 §3): the key in full, since they hand codes out. */
export function redemptionView(row: RedemptionRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    key: row.key,
    name: row.name,
    status: row.status,
    quota: row.quota,
    created_time: row.created_time,
    redeemed_time: row.redeemed_time,
    used_user_id: row.used_user_id,
    expired_time: row.expired_time,
  };
}

export type RedemptionView = ReturnType<typeof redemptionView>;

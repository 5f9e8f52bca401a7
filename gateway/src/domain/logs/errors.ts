import { defineErrors } from '../../errors.ts';

/** Errors of the usage log, its export and the data dashboard (spec doc 3 §2, §7). */
export const LOG_ERRORS = defineErrors({
  LOG_NOT_FOUND: { status: 404, message: { zh: '日志不存在', en: 'No such log' } },
  TASK_NOT_FOUND: { status: 404, message: { zh: '任务不存在', en: 'No such task' } },
  TARGET_TIMESTAMP_REQUIRED: {
    status: 400,
    message: { zh: '目标时间戳不能为空', en: 'target timestamp is required' },
  },
  DATA_RANGE_TOO_LONG: {
    status: 400,
    message: { zh: '时间跨度不能超过 1 个月', en: 'The time range cannot exceed 1 month' },
  },
});

import { defineErrors } from '../../errors.ts';

/** Errors billing can show a user. Codes are stable: clients and tests match on them. */
export const billingErrors = defineErrors({
  MODEL_PRICE_NOT_CONFIGURED: {
    status: 400,
    message: {
      zh: '模型 {model} 的价格未配置，请联系管理员设置价格或开启自用模式',
      en: 'The price of model {model} is not configured; ask an administrator to set it or enable self-use mode',
    },
  },
  MODEL_BILLING_EXPR_INVALID: {
    status: 400,
    message: {
      zh: '模型 {model} 的计费表达式无法使用（{reason}），请联系管理员修改',
      en: 'The billing expression of model {model} cannot be used ({reason}); ask an administrator to fix it',
    },
  },
});

/** The `error.code` new-api puts in the OpenAI-shaped body for each billing error (reference §12). */
export const BILLING_OPENAI_CODES: Readonly<Record<keyof typeof billingErrors, string>> = {
  MODEL_PRICE_NOT_CONFIGURED: 'model_price_error',
  MODEL_BILLING_EXPR_INVALID: 'model_price_error',
};

import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import { insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import { completeTopUp, insertTopUp } from '../../store/repositories/top-ups.ts';
import { addQuota, findUserById } from '../../store/repositories/users.ts';
import type { OptionsService } from '../options/index.ts';
import { epaySign, epayVerify } from './epay.ts';
import { PAYMENT_ERRORS } from './errors.ts';

export interface Payer {
  id: number;
  username: string;
  group: string;
}

/** What the browser posts to the payment site (spec doc 2 §7: a hidden form to `url`). */
export interface PaymentForm {
  url: string;
  fields: Record<string, string>;
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Online top-up through epay (spec doc 2 wallet, reference Appendix B): an amount of US dollars of
 * quota is priced in the site's currency (Price × the group's TopupGroupRatio × any amount
 * discount), ordered as a pending top_ups row, and credited once when the payment site's signed
 * notification says it was paid.
 */
export class TopUpService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;

  constructor(deps: { db: Kysely<Database>; options: OptionsService }) {
    this.#db = deps.db;
    this.#options = deps.options;
  }

  /** The money to pay for `amount`, rounded to cents; refuses amounts under MinTopUp. */
  price(amount: unknown, payer: Payer): number {
    this.#merchant();
    const units = this.#amount(amount);
    const o = this.#options;
    const groupRatio = o.getJson<Record<string, number>>('TopupGroupRatio')[payer.group] ?? 1;
    const discount = o.getJson<Record<string, number>>('payment_setting.amount_discount')[String(units)] ?? 1;
    return Math.round(units * o.getNumber('Price') * groupRatio * discount * 100) / 100;
  }

  /** Orders a top-up and answers the form the browser posts to the payment site. */
  async start(input: { amount: unknown; paymentMethod: unknown }, payer: Payer): Promise<PaymentForm> {
    const merchant = this.#merchant();
    const methods = this.#options.getJson<Array<{ type: string }>>('PayMethods');
    const method = typeof input.paymentMethod === 'string' ? input.paymentMethod : '';
    if (!methods.some((m) => m.type === method)) throw new AppError(PAYMENT_ERRORS.TOPUP_METHOD_INVALID);
    const amount = this.#amount(input.amount);
    const money = this.price(amount, payer);
    const tradeNo = `USR${payer.id}NO${randomBytes(8).toString('hex')}`;
    await insertTopUp(this.#db, {
      user_id: payer.id,
      amount,
      money,
      trade_no: tradeNo,
      payment_method: method,
      status: 'pending',
      create_time: now(),
    });
    const server = this.#options.get('ServerAddress').replace(/\/+$/, '');
    const callback = (this.#options.get('CustomCallbackAddress') || server).replace(/\/+$/, '');
    const fields: Record<string, string> = {
      pid: merchant.pid,
      type: method,
      out_trade_no: tradeNo,
      notify_url: `${callback}/api/user/epay/notify`,
      return_url: `${server}/topup`,
      name: `TUC${amount}`,
      money: money.toFixed(2),
    };
    fields.sign = epaySign(fields, merchant.key);
    fields.sign_type = 'MD5';
    return { url: `${merchant.address.replace(/\/+$/, '')}/submit.php`, fields };
  }

  /**
   * Applies a payment notification: a valid signature and a successful trade credit the order's
   * quota once (a repeated notification changes nothing). Answers whether it was accepted.
   */
  async notify(params: Record<string, string>): Promise<boolean> {
    const key = this.#options.get('EpayKey');
    if (key === '' || !epayVerify(params, key)) return false;
    if (params.trade_status !== 'TRADE_SUCCESS') return true;
    const tradeNo = params.out_trade_no ?? '';
    const perUnit = this.#options.getNumber('QuotaPerUnit');
    await this.#db.transaction().execute(async (trx) => {
      const order = await completeTopUp(trx, tradeNo, now());
      if (!order) return;
      const quota = Math.round(order.amount * perUnit);
      await addQuota(trx, order.user_id, quota);
      const user = await findUserById(trx, order.user_id);
      await insertLog(trx, {
        user_id: order.user_id,
        username: user?.username ?? '',
        created_at: now(),
        type: LOG_TYPE.topup,
        quota,
        content: `在线充值成功，充值金额: ${order.money.toFixed(2)}，支付方式: ${order.payment_method}，订单号: ${tradeNo}`,
      });
    });
    return true;
  }

  #merchant(): { address: string; pid: string; key: string } {
    const o = this.#options;
    const merchant = { address: o.get('PayAddress'), pid: o.get('EpayId'), key: o.get('EpayKey') };
    if (!merchant.address || !merchant.pid || !merchant.key) throw new AppError(PAYMENT_ERRORS.TOPUP_DISABLED);
    return merchant;
  }

  #amount(amount: unknown): number {
    const min = Math.max(1, this.#options.getNumber('MinTopUp'));
    const units = typeof amount === 'number' ? amount : Number(amount);
    if (!Number.isInteger(units) || units < min) throw new AppError(PAYMENT_ERRORS.TOPUP_AMOUNT_TOO_SMALL, { min });
    return units;
  }
}

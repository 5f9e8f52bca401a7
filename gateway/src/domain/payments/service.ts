import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import { insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import {
  completeTopUp,
  findTopUp,
  insertTopUp,
  listTopUps,
  type TopUpQuery,
  type TopUpRow,
} from '../../store/repositories/top-ups.ts';
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

/** What the wallet page reads to offer a top-up. */
export interface TopUpInfo {
  enable_online_topup: boolean;
  enable_stripe_topup: boolean;
  enable_creem_topup: boolean;
  creem_products: string;
  pay_methods: Array<Record<string, string>>;
  min_topup: number;
  stripe_min_topup: number;
  amount_options: number[];
  discount: Record<string, number>;
}

/** An order as new-api's history table reads it. */
export interface TopUpView {
  id: number;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  complete_time: number;
  status: string;
}

const topUpView = (row: TopUpRow): TopUpView => ({
  id: row.id,
  user_id: row.user_id,
  amount: Number(row.amount),
  money: Number(row.money),
  trade_no: row.trade_no,
  payment_method: row.payment_method,
  create_time: Number(row.create_time),
  complete_time: Number(row.complete_time),
  status: row.status,
});

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
    await this.#db.transaction().execute(async (trx) => {
      const order = await completeTopUp(trx, tradeNo, now());
      if (!order) return;
      await this.#credit(
        trx,
        order,
        `在线充值成功，充值金额: ${order.money.toFixed(2)}，支付方式: ${order.payment_method}，订单号: ${tradeNo}`,
      );
    });
    return true;
  }

  /** What the wallet page needs to offer a top-up (new-api's GET /api/user/topup/info). */
  info(): TopUpInfo {
    const o = this.#options;
    return {
      enable_online_topup: o.get('PayAddress') !== '' && o.get('EpayId') !== '' && o.get('EpayKey') !== '',
      // Only epay is served; the other providers' switches say so.
      enable_stripe_topup: false,
      enable_creem_topup: false,
      creem_products: '[]',
      pay_methods: o.getJson<Array<Record<string, string>>>('PayMethods'),
      min_topup: Math.max(1, o.getNumber('MinTopUp')),
      stripe_min_topup: 0,
      amount_options: o.getJson<number[]>('payment_setting.amount_options'),
      discount: o.getJson<Record<string, number>>('payment_setting.amount_discount'),
    };
  }

  /** A page of orders, newest first: one user's (userId) or everyone's, optionally by part of the order number. */
  async list(
    query: TopUpQuery,
    page: { offset: number; limit: number },
  ): Promise<{ items: TopUpView[]; total: number }> {
    const { rows, total } = await listTopUps(this.#db, query, page);
    return { items: rows.map(topUpView), total };
  }

  /**
   * An administrator marks a pending order paid (the payment site's notification was lost): the order's
   * quota is credited once — a second completion, or one racing the notification, finds it no longer
   * pending and changes nothing.
   */
  async completeManually(tradeNo: string, admin: { id: number; username: string }): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const order = await completeTopUp(trx, tradeNo, now());
      if (!order) {
        const existing = await findTopUp(trx, tradeNo);
        throw new AppError(existing ? PAYMENT_ERRORS.TOPUP_ORDER_NOT_PENDING : PAYMENT_ERRORS.TOPUP_ORDER_NOT_FOUND);
      }
      await this.#credit(
        trx,
        order,
        `管理员补单成功，充值金额: ${order.money.toFixed(2)}，支付方式: ${order.payment_method}，订单号: ${tradeNo}，操作管理员: ${admin.username} (${admin.id})`,
      );
    });
  }

  /** Adds a completed order's quota to its user's wallet and logs the top-up, inside the completing transaction. */
  async #credit(trx: Transaction<Database>, order: TopUpRow, content: string): Promise<void> {
    const quota = Math.round(order.amount * this.#options.getNumber('QuotaPerUnit'));
    await addQuota(trx, order.user_id, quota);
    const user = await findUserById(trx, order.user_id);
    await insertLog(trx, {
      user_id: order.user_id,
      username: user?.username ?? '',
      created_at: now(),
      type: LOG_TYPE.topup,
      quota,
      content,
    });
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

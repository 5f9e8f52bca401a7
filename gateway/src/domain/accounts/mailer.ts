import { AppError } from '../../errors.ts';
import type { OptionsService } from '../options/index.ts';
import { EMAIL_ERRORS } from './email-errors.ts';

export interface MailMessage {
  /** One address, already validated: it is handed to SMTP as is, never parsed as a list. */
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Whether an SMTP server is set at all; checked before anything is stored for a mail. */
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
}

export interface MailTimeouts {
  connectMs: number;
  greetingMs: number;
  /** Longest silence on an open connection. */
  socketMs: number;
  /** Ceiling for the whole send, so a server trickling bytes cannot hold a request either. */
  totalMs: number;
}

const DEFAULT_TIMEOUTS: MailTimeouts = { connectMs: 10_000, greetingMs: 10_000, socketMs: 20_000, totalMs: 30_000 };

/**
 * Sends mail through the SMTP server named by the SMTP* options. The options are read on every send,
 * so a change in the settings applies to the next mail on every pod without a restart.
 */
export class SmtpMailer implements Mailer {
  readonly #options: OptionsService;
  readonly #timeouts: MailTimeouts;

  constructor(options: OptionsService, timeouts: Partial<MailTimeouts> = {}) {
    this.#options = options;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
  }

  get configured(): boolean {
    return this.#settings() !== undefined;
  }

  async send(message: MailMessage): Promise<void> {
    const settings = this.#settings();
    if (!settings) throw new AppError(EMAIL_ERRORS.MAIL_NOT_CONFIGURED);
    const t = this.#timeouts;
    // Loaded with the first mail: most gateways send none, and nodemailer is a megabyte of heap.
    const { createTransport } = await import('nodemailer');
    const transport = createTransport({
      host: settings.host,
      port: settings.port,
      // Implicit TLS on 465 or when asked; otherwise STARTTLS whenever the server offers it (nodemailer's
      // default), so credentials on a 587 submission port are not sent in the clear if TLS is available.
      secure: settings.port === 465 || this.#options.getBoolean('SMTPSSLEnabled'),
      auth: settings.account ? { user: settings.account, pass: this.#options.get('SMTPToken') } : undefined,
      // Some servers (e.g. Outlook) refuse AUTH PLAIN; SMTPForceAuthLogin makes us use AUTH LOGIN.
      authMethod: this.#options.getBoolean('SMTPForceAuthLogin') ? 'LOGIN' : undefined,
      connectionTimeout: t.connectMs,
      greetingTimeout: t.greetingMs,
      socketTimeout: t.socketMs,
      dnsTimeout: t.connectMs,
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`SMTP send took longer than ${t.totalMs} ms`)), t.totalMs);
    });
    try {
      await Promise.race([
        transport.sendMail({
          from: { name: this.#options.get('SystemName'), address: settings.from },
          to: { name: '', address: message.to },
          subject: message.subject,
          text: message.text,
          html: message.html,
        }),
        deadline,
      ]);
    } catch (cause) {
      // The cause (server reply, socket error) goes to the server log, not to the visitor.
      const error = new AppError(EMAIL_ERRORS.MAIL_SEND_FAILED);
      error.cause = cause;
      throw error;
    } finally {
      clearTimeout(timer);
      transport.close();
    }
  }

  #settings(): { host: string; port: number; account: string; from: string } | undefined {
    const host = this.#options.get('SMTPServer').trim();
    const account = this.#options.get('SMTPAccount').trim();
    // new-api sends from the account when no sender address is set.
    const from = this.#options.get('SMTPFrom').trim() || account;
    if (host === '' || from === '') return undefined;
    return { host, port: this.#options.getNumber('SMTPPort'), account, from };
  }
}

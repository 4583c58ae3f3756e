import nodemailer from 'nodemailer';
import type { Logger } from '../../log.js';
import { checkDestination, OutboundRefused, portOf } from '../../shared/outbound/destination.js';
import { Outbox, type MailRecord } from './outbox.js';

/** A mail to send: plain text, as Parse Server's default verification and reset mails. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** An app's own mail settings (the `emailAdapter` app setting). */
export interface AppMailSettings {
  /** `smtp://user:pass@host:587` or `smtps://…:465`. */
  smtpUrl?: string;
  /** The From address, e.g. `My App <no-reply@example.com>`. */
  fromAddress?: string;
}

const SMTP_TIMEOUT_MS = 15_000;

/**
 * Sends an app's mails over SMTP with nodemailer, and keeps each in the app's outbox (outbox.ts) with
 * what became of it. An SMTP server an app owner configured is connected to only at a public address
 * (resolved here, and that address is the one connected to, TLS still checked against the name)
 * or a `host:port` the operator allows (`BACKYARD_CLOUD_ALLOW_HOSTS`), as for sign-in providers.
 */
export class Mailer {
  /**
   * @param options.smtpUrl the operator's SMTP server (BACKYARD_SMTP_URL), for apps without their own.
   * @param options.from the operator's From address (BACKYARD_MAIL_FROM).
   * @param options.allowHosts `host:port` pairs an app's SMTP server may be at although not public.
   */
  constructor(private readonly options: { smtpUrl?: string; from: string; allowHosts: readonly string[]; log: Logger }) {}

  /**
   * Sends `mail` through the app's SMTP server (`app`), else the operator's, else none, and records
   * it in the outbox of `folder`. Never rejects: a failure is recorded (`failed`, with the SMTP
   * server's or the resolver's words) and logged; an outbox that cannot be written is logged.
   * @returns the record, or undefined when it could not be kept.
   */
  async send(folder: string, app: AppMailSettings | null, mail: Mail): Promise<MailRecord | undefined> {
    try {
      return await this.deliver(folder, app, mail);
    } catch (error) {
      // The outbox could not be written (a full disk): say so; the caller's request has been answered.
      this.options.log.error({ err: error, folder }, 'mail not recorded');
      return undefined;
    }
  }

  private async deliver(folder: string, app: AppMailSettings | null, mail: Mail): Promise<MailRecord> {
    const outbox = new Outbox(folder);
    const route = { smtpUrl: app?.smtpUrl ?? this.options.smtpUrl, from: app?.fromAddress ?? this.options.from, ownersUrl: app?.smtpUrl !== undefined };
    if (!route.smtpUrl) return outbox.add({ ...mail, from: route.from, status: 'kept' });
    const url = new URL(route.smtpUrl);
    const via = url.host;
    try {
      const host = await this.address(url, route.ownersUrl);
      const secure = url.protocol === 'smtps:';
      const transport = nodemailer.createTransport({
        host,
        port: Number(url.port) || (secure ? 465 : 587),
        secure,
        auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
        tls: { servername: url.hostname },
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
      });
      try {
        await transport.sendMail({ from: route.from, to: mail.to, subject: mail.subject, text: mail.text });
      } finally {
        transport.close();
      }
      return await outbox.add({ ...mail, from: route.from, status: 'sent', via });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.options.log.warn({ via, err: message }, 'mail not sent');
      return outbox.add({ ...mail, from: route.from, status: 'failed', error: message, via });
    }
  }

  /**
   * The address to connect to for `url`: an owner's host resolved once and checked as every
   * outbound address is (shared/outbound/destination.ts), the operator's as it is.
   * @throws Error naming the host when an owner's host is not public and not allowed.
   */
  private async address(url: URL, ownersUrl: boolean): Promise<string> {
    if (!ownersUrl) return url.hostname.replace(/^\[|\]$/g, '');
    try {
      return (await checkDestination(url.hostname, portOf(url), { allowHosts: this.options.allowHosts })).address;
    } catch (error) {
      if (!(error instanceof OutboundRefused)) throw error;
      throw new Error(`${error.message}; an app's SMTP server must be on the internet, or the operator must list it in BACKYARD_CLOUD_ALLOW_HOSTS`);
    }
  }
}

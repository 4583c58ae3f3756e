import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** One mail an app sent, or would have sent: what the dashboard's mail page lists. */
export interface MailRecord {
  id: string;
  /** ISO 8601, when it was handed to the transport. */
  at: string;
  to: string;
  from: string;
  subject: string;
  text: string;
  /** `sent`: an SMTP server accepted it; `failed`: it did not (see `error`); `kept`: no SMTP server is configured, so it is only here. */
  status: 'sent' | 'failed' | 'kept';
  error?: string;
  /** The SMTP server's host, when one was used. */
  via?: string;
}

/** The newest mails an app keeps; older ones are removed as new ones come. */
export const OUTBOX_KEEP = 200;

/**
 * An app's mails as files (`apps/<appId>/mail/<time>-<id>.json`), on the home folder that several
 * Backyard processes share (README, PostgreSQL): with no SMTP server configured, this is where a
 * verification or password reset mail is read.
 */
export class Outbox {
  constructor(private readonly folder: string) {}

  /** Keeps `mail` and removes the oldest beyond OUTBOX_KEEP. */
  async add(mail: Omit<MailRecord, 'id' | 'at'>): Promise<MailRecord> {
    const at = new Date().toISOString();
    const record: MailRecord = { id: randomBytes(8).toString('hex'), at, ...mail };
    await fs.mkdir(this.folder, { recursive: true });
    await fs.writeFile(path.join(this.folder, `${at.replace(/[:.]/g, '-')}-${record.id}.json`), JSON.stringify(record));
    const names = await this.names();
    await Promise.all(names.slice(0, Math.max(0, names.length - OUTBOX_KEEP)).map((name) => fs.rm(path.join(this.folder, name), { force: true })));
    return record;
  }

  /** The newest mails first, at most `limit`. */
  async list(limit = 50): Promise<MailRecord[]> {
    const names = (await this.names()).reverse().slice(0, limit);
    const records = await Promise.all(
      names.map(async (name) => {
        try {
          return JSON.parse(await fs.readFile(path.join(this.folder, name), 'utf8')) as MailRecord;
        } catch {
          return undefined; // removed meanwhile by another process keeping its limit
        }
      }),
    );
    return records.filter((r): r is MailRecord => r !== undefined);
  }

  private async names(): Promise<string[]> {
    try {
      return (await fs.readdir(this.folder)).filter((n) => n.endsWith('.json')).sort();
    } catch {
      return [];
    }
  }
}

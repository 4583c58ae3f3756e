import type { ScheduleMarks } from '../../data/cloud/scheduler.js';
import type { Webhook, WebhookLists } from '../../data/cloud/webhooks.js';
import type { Sql } from '../../shared/sql.js';

/**
 * Backend Apps' webhooks in the platform store (`app_webhooks`: one row per app, its list as JSON),
 * so that every node serving the data API reads the same ones whatever its home (BACKYARD_ROLE).
 * A list still in a file of this home (`apps/<appId>/hooks.json`, written before the store kept
 * them) is taken into the store the first time the app's list is read.
 * @param legacy the files of this home (webhookFiles), read when the store has no row for an app.
 */
export function webhookListsIn(db: Sql, legacy: WebhookLists): WebhookLists {
  return {
    async read(appId) {
      const row = await db.get<{ list: string }>('SELECT list FROM app_webhooks WHERE app_id = ?', appId);
      if (row) return JSON.parse(row.list) as Webhook[];
      const fromFile = await legacy.read(appId);
      if (fromFile.length) {
        const known = await db.get<{ app_id: string }>('SELECT app_id FROM backend_apps WHERE app_id = ?', appId);
        if (known) await db.run('INSERT INTO app_webhooks (app_id, list) VALUES (?, ?) ON CONFLICT (app_id) DO NOTHING', appId, JSON.stringify(fromFile));
      }
      return fromFile;
    },
    async write(appId, list) {
      await db.run('INSERT INTO app_webhooks (app_id, list) VALUES (?, ?) ON CONFLICT (app_id) DO UPDATE SET list = excluded.list', appId, JSON.stringify(list));
    },
  };
}

/**
 * Which Backend Apps have job schedules, in the platform store (`app_job_schedules`), so that every
 * data node starts the scheduled jobs of every app (the claim in the app's database keeps a run to one
 * node). Marks still in files of this home are listed too.
 * @param legacy the marker files of this home (scheduleMarkFiles).
 */
export function scheduleMarksIn(db: Sql, legacy: ScheduleMarks): ScheduleMarks {
  return {
    async list() {
      const rows = await db.all<{ app_id: string }>('SELECT app_id FROM app_job_schedules ORDER BY app_id');
      return [...new Set([...rows.map((r) => r.app_id), ...(await legacy.list())])];
    },
    async set(appId, has) {
      try {
        if (has) {
          const known = await db.get<{ app_id: string }>('SELECT app_id FROM backend_apps WHERE app_id = ?', appId);
          if (known) await db.run('INSERT INTO app_job_schedules (app_id) VALUES (?) ON CONFLICT (app_id) DO NOTHING', appId);
        } else {
          await db.run('DELETE FROM app_job_schedules WHERE app_id = ?', appId);
          await legacy.set(appId, false);
        }
      } catch {
        // Found again at the app's next reload (ScheduleMarks.set never throws).
      }
    },
  };
}

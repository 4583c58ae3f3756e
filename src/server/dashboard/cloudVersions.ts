import type { FastifyInstance } from 'fastify';
import { ManagementError } from '../../errors.js';
import type { CloudCodeVersion } from '../../platform/backendapps/cloudCode/versions.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { appHref } from './appframe.js';
import { formOf, ownApp, redirectWith, sessionOf, type Dashboard } from './context.js';
import { html, plural, type Html } from './html.js';
import { badge, csrfField } from './layout.js';
import { whenExactly } from './runs.js';

type AppParams = { Params: { appId: string } };

/**
 * The kept versions of an app's cloud code tree, newest first (`CloudCodeService.versions`, the
 * service behind getCloudCodeVersions): the active one marked, each other with a button that rolls
 * back to it (`CloudCodeService.rollback`, behind rollbackCloudCode).
 */
export function versionsTable(appId: string, session: DashboardSession, versions: readonly CloudCodeVersion[]): Html {
  const action = `${appHref(appId, 'cloud')}/rollback`;
  return html`<section aria-labelledby="versions-heading"><h2 id="versions-heading">Versions</h2>
<p class="muted">Each deploy keeps the files as a new version; rolling back puts an earlier version's files back as a new one.</p>
<div class="table-wrap"><table class="versions" role="table">
  <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader" class="num">Version</th><th scope="col" role="columnheader">Made</th><th scope="col" role="columnheader">Changes</th><th scope="col" role="columnheader">State</th></tr></thead>
  <tbody role="rowgroup">${versions.map(
    (v) => html`<tr role="row"${v.active ? html` aria-current="true"` : ''}><th scope="row" role="rowheader" class="num">${v.version}</th><td role="cell" class="nowrap">${whenExactly(v.createdAt)}</td><td role="cell" class="mono small">${v.changes}</td>
    <td role="cell">${v.active
      ? badge('ok', 'active')
      : html`<form method="post" action="${action}" class="inline" data-confirm="Put the files of version ${v.version} back in place, as a new version?">${csrfField(session)}<input type="hidden" name="version" value="${v.version}"><button type="submit" class="secondary small" aria-label="Roll back to version ${v.version}">Roll back</button></form>`}</td></tr>`,
  )}</tbody></table></div></section>`;
}

/** Rollback from the versions table: answers with the cloud code page and what the rollback did, as a deploy from the editor does. */
export function cloudVersionRoutes(app: FastifyInstance, d: Dashboard): void {
  app.post<AppParams>('/apps/:appId/cloud/rollback', async (request, reply) => {
    const session = sessionOf(request);
    const backendApp = await ownApp(d, request, reply, request.params.appId);
    if (!backendApp) return reply;
    const base = appHref(backendApp.appId, 'cloud');
    const raw = formOf(request).version ?? '';
    const version = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : undefined;
    try {
      if (version === undefined) throw new ManagementError('invalid', `version "${raw}" is not a version number.`);
      const result = await d.services.cloudCode.rollback(session.account.id, backendApp.appId, version);
      return redirectWith(d, reply, session, base, {
        kind: result.warnings.length ? 'warn' : 'ok',
        title: result.warnings.length
          ? `Rolled back to version ${version} as version ${result.version}, with ${plural(result.warnings.length, 'warning')}:`
          : `Rolled back to version ${version} as version ${result.version}.`,
        lines: result.warnings,
        detail: result.message,
      });
    } catch (error) {
      if (!(error instanceof ManagementError)) throw error;
      return redirectWith(d, reply, session, base, { kind: 'bad', title: 'Nothing was rolled back:', lines: [error.message] });
    }
  });
}

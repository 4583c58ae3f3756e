import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ManagementError } from '../../errors.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { invokeOperation } from '../../../tools/invoke.js';
import { operationsByName } from '../../../tools/index.js';
import type { OperationName } from '../../../tools/operation.js';
import { redirectWith, sendNotFound, sessionOf, type Dashboard } from './context.js';
import { html, type Html } from './html.js';
import { csrfField } from './layout.js';
import { environmentHref } from './overview.js';
import { webAppHref } from './webapps.js';

/** A lifecycle button: one form posting the session's CSRF token, confirmed before it is sent. */
export const lifecycleButton = (session: DashboardSession, action: string, label: string, confirm: string, danger = true): Html =>
  html`<form method="post" action="${action}" class="inline" data-confirm="${confirm}">${csrfField(session)}<button type="submit" class="${danger ? 'danger' : 'secondary'}">${label}</button></form>`;

interface Action {
  /** Dashboard path of the post, under /dashboard. */
  route: string;
  param: string;
  operation: OperationName;
  /** The operation's input field that carries the id. */
  field: string;
  what: string;
  /** Where to go after success (the overview after a delete). */
  after: (id: string) => string;
  done: string;
}

const ACTIONS: Action[] = [
  { route: '/apps/:id/delete', param: 'id', operation: 'deleteBackendApp', field: 'appId', what: 'Backend App', after: () => '/dashboard', done: 'The Backend App was deleted.' },
  { route: '/web-apps/:id/stop', param: 'id', operation: 'stopWebApp', field: 'appId', what: 'Web App', after: (id) => webAppHref(id), done: 'The Web App was stopped.' },
  { route: '/web-apps/:id/start', param: 'id', operation: 'startWebApp', field: 'appId', what: 'Web App', after: (id) => webAppHref(id), done: 'The Web App was started.' },
  { route: '/web-apps/:id/delete', param: 'id', operation: 'deleteWebApp', field: 'appId', what: 'Web App', after: () => '/dashboard', done: 'The Web App was deleted.' },
  {
    route: '/environments/:id/delete',
    param: 'id',
    operation: 'deleteDevelopmentEnvironment',
    field: 'developmentEnvironmentId',
    what: 'development environment',
    after: () => '/dashboard',
    done: 'The development environment was deleted.',
  },
  {
    route: '/environments/:id/restart',
    param: 'id',
    operation: 'restartDevelopmentEnvironment',
    field: 'developmentEnvironmentId',
    what: 'development environment',
    after: (id) => environmentHref(id),
    done: 'The development environment was restarted: every process in it ended, /workspace was kept.',
  },
];

/**
 * Delete, stop, start and restart from the dashboard, through the operations
 * themselves, as the session's account: the same rules, texts and 404 for another account's ids.
 */
export function lifecycleRoutes(app: FastifyInstance, d: Dashboard): void {
  for (const action of ACTIONS) {
    app.post<{ Params: { id: string } }>(action.route, async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const session = sessionOf(request);
      const id = request.params.id;
      try {
        await invokeOperation(operationsByName[action.operation], { [action.field]: id }, { account: session.account, services: d.services });
        return redirectWith(d, reply, session, action.after(id), { kind: 'ok', title: action.done, lines: [] });
      } catch (error) {
        if (!(error instanceof ManagementError)) throw error;
        if (error.kind === 'notFound') return sendNotFound(reply, session, action.what);
        return redirectWith(d, reply, session, action.after(id), { kind: 'bad', title: error.message, lines: [] });
      }
    });
  }
}

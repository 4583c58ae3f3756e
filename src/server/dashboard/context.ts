import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import type { DashboardSessionOperations, Services } from '../../platform/services.js';
import type { BackendApp } from '../../platform/backendapps/service.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';
import { html, query, type HtmlValue } from './html.js';
import { layout, notice, type PageParts } from './layout.js';
import type { Flash, FlashMessages } from './security.js';

/** What the dashboard's page handlers share. */
export interface Dashboard {
  platform: Platform;
  services: Services;
  sessions: DashboardSessionOperations;
  flash: FlashMessages;
  /** Open server-sent event streams, ended when the server stops. */
  streams: Set<ServerResponse>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The session the dashboard's guard found (index.ts), null on its public routes and outside the
     * dashboard: a request decoration (https://fastify.dev/docs/latest/Reference/Decorators/), set
     * by `bindSession` and read through `sessionOf`.
     */
    dashboardSession: DashboardSession | null;
  }
}

/** Records the session the guard found for a request (the dashboard plugin decorates its requests with `dashboardSession`). */
export const bindSession = (request: FastifyRequest, session: DashboardSession): void => {
  request.dashboardSession = session;
};

/**
 * The session of a request that passed the guard.
 * @throws Error on a public route (a programming error: those have no session).
 */
export function sessionOf(request: FastifyRequest): DashboardSession {
  const session = request.dashboardSession;
  if (!session) throw new Error('dashboard route without a session');
  return session;
}

/** Sends a full HTML page. */
export function sendPage(reply: FastifyReply, status: number, parts: PageParts): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(layout(parts));
}

/** Redirects after a change (303: the browser follows with a GET). */
export const redirect = (reply: FastifyReply, location: string): FastifyReply => reply.code(303).header('location', location).send();

/** Redirects to `location` with a message shown once there. */
export function redirectWith(d: Dashboard, reply: FastifyReply, session: DashboardSession, location: string, flash: Flash): FastifyReply {
  const id = d.flash.put(session.hash.toString('hex'), flash);
  return redirect(reply, `${location}${location.includes('?') ? '&' : '?'}flash=${encodeURIComponent(id)}`);
}

/** The message a redirect left for this page, as markup ('' when none). */
export function flashOf(d: Dashboard, request: FastifyRequest): HtmlValue {
  const id = (request.query as Record<string, string | undefined>).flash;
  const flash = d.flash.take(sessionOf(request).hash.toString('hex'), id);
  if (!flash) return '';
  const box = notice(flash.kind, flash.title, flash.lines);
  return flash.detail ? html`${box}<pre class="small">${flash.detail}</pre>` : box;
}

/** The 404 page: the same for what does not exist and for what belongs to another account. */
export function sendNotFound(reply: FastifyReply, session: DashboardSession | undefined, what = 'page'): FastifyReply {
  return sendPage(reply, 404, {
    title: 'Not found',
    session,
    crumbs: [{ label: 'Overview', href: '/dashboard' }, { label: 'Not found' }],
    heading: html`<h1>Not found</h1>`,
    body: html`<p>This ${what} does not exist, or it is not yours.</p><p><a href="/dashboard">Back to the overview</a></p>`,
  });
}

/** One of the session's own Backend Apps, or undefined after answering 404. */
export async function ownApp(d: Dashboard, request: FastifyRequest, reply: FastifyReply, appId: string): Promise<BackendApp | undefined> {
  const session = sessionOf(request);
  const app = await d.services.backendApps.get(session.account.id, appId);
  if (!app) sendNotFound(reply, session, 'Backend App');
  return app;
}

/** The form fields of a urlencoded body (the dashboard's forms), as strings. */
export function formOf(request: FastifyRequest): Record<string, string> {
  const body = request.body;
  return body && typeof body === 'object' ? (body as Record<string, string>) : {};
}

/** The query string of a request, as strings (the first of repeated parameters). */
export function queryOf(request: FastifyRequest): Record<string, string | undefined> {
  const raw = (request.query ?? {}) as Record<string, string | string[] | undefined>;
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(raw)) out[k] = Array.isArray(v) ? v[0] : v;
  return out;
}

/** The path and query of the sign-in page that returns to `next` afterwards. */
export const signInPath = (next?: string): string => `/dashboard/sign-in${query({ next })}`;

/** Only same-site dashboard paths are followed after sign-in (no open redirect). */
export function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/dashboard') || next.startsWith('//') || /[\\\r\n]/.test(next)) return '/dashboard';
  if (next.startsWith('/dashboard/sign-')) return '/dashboard';
  return next;
}

import { assetUrl } from './assets.js';
import { html, type Html, type HtmlValue } from './html.js';
import type { DashboardSession } from '../../platform/dashboard/sessions.js';

/** One step of the breadcrumb trail; the last one is the current page and has no link. */
export interface Crumb {
  label: string;
  href?: string;
}

/** What every dashboard page is made of. */
export interface PageParts {
  title: string;
  /** The signed-in session (absent on the sign-in pages). */
  session?: DashboardSession;
  crumbs?: Crumb[];
  /** Markup between the breadcrumbs and the content, usually the page's `<h1>` and tabs. */
  heading?: HtmlValue;
  body: HtmlValue;
}

/** A hidden form field with the session's CSRF token: every form that changes something has one. */
export const csrfField = (session: DashboardSession): Html => html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;

/** A whole HTML document: header with the account and sign-out, breadcrumbs, then the page. */
export function layout(parts: PageParts): string {
  const { session } = parts;
  const crumbs = parts.crumbs?.length
    ? html`<nav aria-label="Breadcrumb"><ol class="crumbs">${parts.crumbs.map((c, i) =>
        c.href && i < parts.crumbs!.length - 1 ? html`<li><a href="${c.href}">${c.label}</a></li>` : html`<li aria-current="page">${c.label}</li>`,
      )}</ol></nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${parts.title} · Backyard</title>
<link rel="stylesheet" href="${assetUrl('dashboard.css')}">
<script src="${assetUrl('dashboard.js')}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/dashboard"><span class="brand-mark" aria-hidden="true"></span>Backyard</a>
  ${session
    ? html`<div class="who"><a href="/dashboard/connections">Connected apps</a><span>Signed in as <strong>${session.account.login}</strong></span>
    <form method="post" action="/dashboard/sign-out">${csrfField(session)}<button type="submit" class="small">Sign out</button></form></div>`
    : ''}
</header>
<main id="main" tabindex="-1">
${crumbs}
${parts.heading ?? ''}
${parts.body}
</main>
</body>
</html>
`.value;
}

/** A tab bar; the tab whose `id` is `current` is marked as the current page. */
export function tabs(label: string, items: Array<{ id: string; label: string; href: string }>, current: string): Html {
  return html`<nav aria-label="${label}"><ul class="tabs">${items.map(
    (t) => html`<li><a href="${t.href}"${t.id === current ? html` aria-current="page"` : ''}>${t.label}</a></li>`,
  )}</ul></nav>`;
}

/** Kinds of message box. */
export type NoticeKind = 'ok' | 'warn' | 'bad';

/** A message box: success, warning or failure, announced to screen readers. */
export function notice(kind: NoticeKind, title: HtmlValue, lines: readonly HtmlValue[] = []): Html {
  return html`<div class="notice ${kind}" role="${kind === 'bad' ? 'alert' : 'status'}"><strong>${title}</strong>${
    lines.length ? html`<ul>${lines.map((l) => html`<li>${l}</li>`)}</ul>` : ''
  }</div>`;
}

/** A state badge. */
export const badge = (kind: 'ok' | 'run' | 'bad' | 'off', text: string, id?: string): Html =>
  html`<span class="badge ${kind}"${id ? html` id="${id}"` : ''}>${text}</span>`;

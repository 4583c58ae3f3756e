import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_MS } from '../../platform/dashboard/sessions.js';
import { randomSecret } from '../../shared/ids.js';

/** The session cookie's name. Host-only (no Domain), so hosted sites on `<sub>.localhost` never get it. */
export const SESSION_COOKIE = 'backyard_session';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Compares two strings in constant time (for tokens of the same kind, such as a request's CSRF token and its session's). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Reads one cookie from a request's `Cookie` header. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends
 * it), Path=/dashboard, expiring with the session, and Secure when Backyard is served over https.
 */
export function sessionCookie(token: string, publicBase: string): string {
  const secure = publicBase.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}${secure}`;
}

/** A header value that removes the session cookie. */
export const clearedSessionCookie = (): string => `${SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`;

/**
 * Whether a change request comes from one of the dashboard's own pages, by its `Origin` (or, when a
 * browser sent none, its `Referer`): the public origin, or the same port on another loopback name.
 * Requests with neither header are refused, as are hosted sites on `<sub>.localhost`, which are
 * same-site with the dashboard but not same-origin.
 */
export function sameOrigin(request: FastifyRequest, publicBase: string): boolean {
  const declared = request.headers.origin ?? refererOrigin(request.headers.referer);
  if (!declared || declared === 'null') return false;
  let url: URL;
  try {
    url = new URL(declared);
  } catch {
    return false;
  }
  const own = new URL(publicBase);
  if (url.origin === own.origin) return true;
  return LOOPBACK.has(url.hostname) && LOOPBACK.has(own.hostname) && url.port === own.port && url.protocol === own.protocol;
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/** Headers of every dashboard answer: no caching of private pages, no framing, a strict content policy. */
export function securityHeaders(reply: FastifyReply): void {
  reply.header(
    'content-security-policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  // same-origin (not no-referrer): browsers then send the real Origin on the dashboard's own form posts.
  reply.header('referrer-policy', 'same-origin');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cross-origin-resource-policy', 'same-origin');
}

/** A message shown once on the next page after a redirect (post, redirect, get). */
export interface Flash {
  kind: 'ok' | 'warn' | 'bad';
  title: string;
  lines: string[];
  /** Extra preformatted text shown under the lines (a deploy's message). */
  detail?: string;
}

/**
 * Messages waiting for the page a change redirects to, in memory for a few minutes, readable only by
 * the session that caused them (the id in the URL alone shows nothing to anyone else).
 */
export class FlashMessages {
  private readonly entries = new Map<string, { owner: string; flash: Flash; at: number }>();

  constructor(private readonly ttlMs = 5 * 60 * 1000) {}

  /** Keeps a message for `owner` (a session's hash, hex) and returns its id for the redirect's query. */
  put(owner: string, flash: Flash): string {
    const now = Date.now();
    for (const [id, entry] of this.entries) if (now - entry.at > this.ttlMs) this.entries.delete(id);
    const id = randomSecret(9);
    this.entries.set(id, { owner, flash, at: now });
    return id;
  }

  /** The message `id` of `owner`, once. */
  take(owner: string, id: string | undefined): Flash | undefined {
    if (!id) return undefined;
    const entry = this.entries.get(id);
    if (!entry || entry.owner !== owner || Date.now() - entry.at > this.ttlMs) return undefined;
    this.entries.delete(id);
    return entry.flash;
  }
}

import { isLoopbackAddress } from '../../shared/publicAddress.js';

/**
 * Rules for the URLs clients give: redirect URIs (OAuth 2.1 §2.3.1 and §7.5, RFC 8252 for native
 * apps) and client ids that are metadata document URLs (Client ID Metadata Documents, MCP
 * "Authorization", 2025-11-25 and later).
 */

/**
 * Whether a URL's hostname is loopback: `localhost` or a name under it (RFC 6761 §6.3), or a
 * loopback address in any spelling (`127.0.0.1`, `[::1]`, `[::ffff:127.0.0.1]`: shared/publicAddress.ts).
 */
export const isLoopbackHost = (hostname: string): boolean => /(^|\.)localhost$/i.test(hostname) || isLoopbackAddress(hostname);

/** Schemes that can never be a redirect target: they run or embed content in the browser. */
const UNSAFE_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:']);

/**
 * Why a redirect URI cannot be registered, or undefined when it can: an absolute URL without a
 * fragment (RFC 6749 §3.1.2), `https`, `http` only on a loopback host (OAuth 2.1 §7.5.1, RFC 8252
 * §7.3), or a private-use scheme of a native app (RFC 8252 §7.1) other than ones that run code.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > 2000) return 'a redirect URI is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `the redirect URI "${uri}" is not an absolute URL`;
  }
  if (url.hash !== '' || uri.includes('#')) return `the redirect URI "${uri}" has a fragment, which redirect URIs may not have`;
  if (url.username || url.password) return `the redirect URI "${uri}" carries credentials`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname) ? undefined : `the redirect URI "${uri}" uses http on a host that is not loopback: use https`;
  }
  if (UNSAFE_SCHEMES.has(url.protocol)) return `the redirect URI "${uri}" uses the scheme ${url.protocol}, which may not be a redirect target`;
  return undefined;
}

/** Whether a client id is meant as a metadata document URL (it looks like an http(s) URL). */
export const isMetadataDocumentId = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

/**
 * Why a client id cannot be a metadata document URL, or undefined when it can: `https` with a path
 * other than `/` (Client ID Metadata Documents, §3; MCP 2025-11-25 "Authorization": "Client ID
 * Metadata Documents" requires https), no fragment, credentials or dot segments, in its normal form.
 * A loopback host (http or https) only when `loopbackClients` (a Backyard on loopback whose operator
 * allows clients on the same machine: BACKYARD_OAUTH_LOOPBACK_CLIENTS).
 */
export function metadataDocumentIdProblem(clientId: string, loopbackClients: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (url.href !== clientId) return `the client_id URL is not in its normal form (${url.href})`;
  if (url.hash !== '' || url.username || url.password) return 'the client_id URL may not have a fragment or credentials';
  if (url.pathname === '/') return 'the client_id URL must have a path';
  if (isLoopbackHost(url.hostname)) {
    return loopbackClients ? undefined : 'the client_id URL is on a loopback host, which this Backyard does not fetch client metadata documents from: use an https URL on the internet';
  }
  return url.protocol === 'https:' ? undefined : 'the client_id URL must use https';
}

/** What a person is shown of a redirect URI: its host (with port) or, for a native app's scheme, the scheme. */
export function redirectTarget(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host !== '' ? url.host : url.protocol;
  } catch {
    return uri;
  }
}

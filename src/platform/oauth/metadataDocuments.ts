import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { OutboundClient, type OutboundFetch } from '../../shared/outbound/client.js';
import { checkClientMetadata, type ClientMetadata, type OAuthClient } from './clientMetadata.js';
import { metadataDocumentIdProblem } from './uris.js';

/** Limits of fetching a client's metadata document. */
export interface MetadataDocumentLimits {
  /** The whole exchange, in milliseconds (default 5000). */
  timeoutMs: number;
  /** The largest document read (default 5 KiB, as the Client ID Metadata Documents draft suggests). */
  maxBytes: number;
  /** How long a fetched document is reused (default 5 minutes). */
  cacheMs: number;
}

const DEFAULTS: MetadataDocumentLimits = { timeoutMs: 5000, maxBytes: 5 * 1024, cacheMs: 5 * 60 * 1000 };
const MAX_CACHED = 200;

const refused = (text: string) => new OAuthError(OAuthErrorCode.InvalidClient, text);

/**
 * Every way a document can fail, once its URL is one Backyard fetches (no answer, a refused or
 * closed address, a redirect, another status, too large, not JSON, not a public client's metadata
 * naming its own URL), is said in these same words: which one it was would tell whoever sends the
 * client_id what listens where, and nothing of what was fetched is repeated.
 */
const UNUSABLE = (maxBytes: number) =>
  `The client metadata document that the client_id names could not be used. It must be at an https address on the internet and answer HTTP 200, without redirects, with JSON of at most ${maxBytes} bytes: client metadata (RFC 7591) giving that same URL as its client_id, its redirect_uris, and token_endpoint_auth_method none.`;

/**
 * Clients identified by the URL of their metadata document (MCP "Authorization", "Client ID
 * Metadata Documents"; draft-ietf-oauth-client-id-metadata-document): Backyard checks the URL's form
 * (`metadataDocumentIdProblem`: https, loopback only where allowed) and fetches the JSON document
 * through the outbound client (public addresses only), within a time and size limit and without
 * following redirects, and accepts it only when its `client_id` equals the URL exactly. Documents
 * are kept for `cacheMs`. The caller fetches only for a signed-in person (server/dashboard/authorize.ts).
 */
export class MetadataDocuments {
  private readonly limits: MetadataDocumentLimits;
  private readonly fetch: OutboundFetch;
  private readonly loopbackClients: () => boolean;
  private readonly now: () => number;
  private readonly cache = new Map<string, { client: OAuthClient; until: number }>();

  /**
   * @param options.fetch the outbound client's fetch (default: one reaching public addresses only).
   * @param options.loopbackClients whether a loopback client_id is accepted (default: never); the
   *   `fetch` given must then reach loopback too.
   */
  constructor(options: { fetch?: OutboundFetch; loopbackClients?: () => boolean; limits?: Partial<MetadataDocumentLimits>; now?: () => number } = {}) {
    this.limits = { ...DEFAULTS, ...options.limits };
    this.fetch = options.fetch ?? new OutboundClient().fetch;
    this.loopbackClients = options.loopbackClients ?? (() => false);
    this.now = options.now ?? Date.now;
  }

  /**
   * The client the document at `clientId` describes.
   * @throws OAuthError `invalid_client` when the URL is not one Backyard fetches (the description
   *   says why), or when its document cannot be used (one description for every cause).
   */
  async get(clientId: string): Promise<OAuthClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > this.now()) return cached.client;
    const problem = metadataDocumentIdProblem(clientId, this.loopbackClients());
    if (problem) throw refused(`The client_id cannot be used: ${problem}.`);
    const metadata = await this.fetchMetadata(clientId);
    const client: OAuthClient = { clientId, clientName: metadata.client_name ?? '', redirectUris: metadata.redirect_uris, kind: 'metadata-document' };
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, until: this.now() + this.limits.cacheMs });
    return client;
  }

  /** The document's metadata, when it is a public client's naming its own URL. @throws OAuthError `invalid_client` (UNUSABLE) otherwise. */
  private async fetchMetadata(clientId: string): Promise<ClientMetadata> {
    const { timeoutMs, maxBytes } = this.limits;
    try {
      const response = await this.fetch(clientId, { headers: { accept: 'application/json' }, redirect: 'manual', timeoutMs, maxBytes });
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`HTTP ${response.status}`);
      }
      const metadata = checkClientMetadata(JSON.parse(await response.text()));
      if (metadata.client_id !== clientId) throw new Error('another client_id');
      if ((metadata.token_endpoint_auth_method ?? 'none') !== 'none') throw new Error('not a public client');
      return metadata;
    } catch {
      throw refused(UNUSABLE(maxBytes));
    }
  }
}

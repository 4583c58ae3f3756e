import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { OutboundClient, type OutboundFetch } from '../../shared/outbound/client.js';
import { checkClientMetadata, type OAuthClient } from './clientMetadata.js';
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
 * Every way a document can fail to arrive (no answer, a refused or closed address, a redirect,
 * another status, too large, not JSON) is said in these same words: which one it was would tell
 * whoever sends the client_id what is listening where.
 */
const UNFETCHABLE = (maxBytes: number) =>
  `The client metadata document that the client_id names could not be fetched: it must answer HTTP 200 with JSON of at most ${maxBytes} bytes, at an https address on the internet, without redirects.`;

/** What is wrong with a document that arrived, in words of Backyard's own: none of the document is repeated. */
const INVALID = {
  metadata: 'The client metadata document that the client_id names is not valid client metadata (RFC 7591 §2): it needs redirect_uris that Backyard accepts, and only the grant types authorization_code and refresh_token and the response type code.',
  clientId: "The client metadata document that the client_id names does not give that same URL as its client_id.",
  method: 'The client metadata document that the client_id names asks for a token_endpoint_auth_method other than none; Backyard accepts only public clients with PKCE.',
};

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
   *   says why), when the document cannot be fetched (one description for every cause), or when it
   *   names another `client_id`, asks for a client secret method, or has invalid metadata.
   */
  async get(clientId: string): Promise<OAuthClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > this.now()) return cached.client;
    const problem = metadataDocumentIdProblem(clientId, this.loopbackClients());
    if (problem) throw refused(`The client_id cannot be used: ${problem}.`);
    const document = await this.fetchDocument(clientId);
    let metadata;
    try {
      metadata = checkClientMetadata(document);
    } catch {
      throw refused(INVALID.metadata);
    }
    if (metadata.client_id !== clientId) throw refused(INVALID.clientId);
    if ((metadata.token_endpoint_auth_method ?? 'none') !== 'none') throw refused(INVALID.method);
    const client: OAuthClient = { clientId, clientName: metadata.client_name ?? '', redirectUris: metadata.redirect_uris, kind: 'metadata-document' };
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, until: this.now() + this.limits.cacheMs });
    return client;
  }

  private async fetchDocument(clientId: string): Promise<unknown> {
    const { timeoutMs, maxBytes } = this.limits;
    try {
      const response = await this.fetch(clientId, { headers: { accept: 'application/json' }, redirect: 'manual', timeoutMs, maxBytes });
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error('not 200');
      }
      return JSON.parse(await response.text()) as unknown;
    } catch {
      throw refused(UNFETCHABLE(maxBytes));
    }
  }
}

import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { checkClientMetadata, type OAuthClient } from './clientMetadata.js';

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

const refused = (clientId: string, why: string) =>
  new OAuthError(OAuthErrorCode.InvalidClient, `The client metadata document at ${clientId} cannot be used: ${why}.`);

/**
 * Clients identified by the URL of their metadata document (MCP "Authorization", "Client ID
 * Metadata Documents"; draft-ietf-oauth-client-id-metadata-document): Backyard fetches the JSON
 * document, within a time and size limit and without following redirects, and accepts it only when
 * its `client_id` equals the URL exactly. Documents are kept for `cacheMs`.
 *
 * The caller checks the URL's form first (`metadataDocumentIdProblem`).
 */
export class MetadataDocuments {
  private readonly limits: MetadataDocumentLimits;
  private readonly cache = new Map<string, { client: OAuthClient; until: number }>();

  constructor(
    limits: Partial<MetadataDocumentLimits> = {},
    private readonly fetchFn: typeof fetch = fetch,
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULTS, ...limits };
  }

  /**
   * The client the document at `clientId` describes.
   * @throws OAuthError `invalid_client` when it cannot be fetched in time, is not JSON within the
   *   size limit, names another `client_id`, asks for a client secret method, or has invalid
   *   metadata (the description says which).
   */
  async get(clientId: string): Promise<OAuthClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > this.now()) return cached.client;
    const document = await this.fetchDocument(clientId);
    let metadata;
    try {
      metadata = checkClientMetadata(document);
    } catch (error) {
      throw refused(clientId, error instanceof Error ? error.message : 'its metadata is not valid');
    }
    if (metadata.client_id !== clientId) throw refused(clientId, `its client_id is ${JSON.stringify(metadata.client_id ?? null)}, not the document's own URL`);
    const method = metadata.token_endpoint_auth_method ?? 'none';
    if (method !== 'none') throw refused(clientId, `its token_endpoint_auth_method is ${method}; Backyard accepts only none (a public client with PKCE)`);
    const client: OAuthClient = { clientId, clientName: metadata.client_name ?? '', redirectUris: metadata.redirect_uris, kind: 'metadata-document' };
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, until: this.now() + this.limits.cacheMs });
    return client;
  }

  private async fetchDocument(clientId: string): Promise<unknown> {
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    let response: Response;
    try {
      response = await this.fetchFn(clientId, { headers: { accept: 'application/json' }, redirect: 'manual', signal });
    } catch {
      throw refused(clientId, signal.aborted ? `it did not answer within ${this.limits.timeoutMs} ms` : 'it could not be fetched');
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw refused(clientId, `it answered HTTP ${response.status} (redirects are not followed)`);
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > this.limits.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw refused(clientId, `it is larger than ${this.limits.maxBytes} bytes`);
    }
    const text = await this.readLimited(clientId, response, signal);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw refused(clientId, 'it is not JSON');
    }
  }

  private async readLimited(clientId: string, response: Response, signal: AbortSignal): Promise<string> {
    if (!response.body) return '';
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > this.limits.maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw refused(clientId, `it is larger than ${this.limits.maxBytes} bytes`);
        }
        chunks.push(value);
      }
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw refused(clientId, signal.aborted ? `it did not arrive within ${this.limits.timeoutMs} ms` : 'it could not be read');
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

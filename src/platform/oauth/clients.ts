import { OAuthError, type OAuthClientInformationFull } from '@modelcontextprotocol/server';
import { randomSecret } from '../../shared/ids.js';
import type { Sql } from '../../shared/sql.js';
import { checkClientMetadata, type OAuthClient } from './clientMetadata.js';
import type { MetadataDocuments } from './metadataDocuments.js';
import { isMetadataDocumentId } from './uris.js';

/** Client ids that Dynamic Client Registration hands out: `byc_` and 144 random bits. */
const REGISTERED_PREFIX = 'byc_';

/** The answer to `find`: the client, or why the id names none (for the person, never sent back to a redirect URI). */
export type ClientLookup = { client: OAuthClient } | { problem: string };

/**
 * The clients that may ask for authorization: those registered with Dynamic Client Registration
 * (RFC 7591, stored in `oauth_clients`) and those whose `client_id` is the URL of a metadata
 * document (fetched by `MetadataDocuments`). All are public clients: they prove themselves with
 * PKCE and an exact redirect URI, not with a secret (OAuth 2.1 §2.1).
 */
export class OAuthClients {
  constructor(
    private readonly db: Sql,
    private readonly documents: MetadataDocuments,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Registers a client (RFC 7591 §3.1) from its metadata.
   * @returns the client information response (RFC 7591 §3.2.1): a new `client_id`, no secret, and
   *   `token_endpoint_auth_method: "none"` whatever was asked.
   * @throws OAuthError `invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 §3.2.2).
   */
  async register(input: unknown): Promise<OAuthClientInformationFull> {
    const metadata = checkClientMetadata(input);
    const clientId = REGISTERED_PREFIX + randomSecret(18);
    const issuedAt = Math.floor(this.now() / 1000);
    const registered: OAuthClientInformationFull = {
      client_id: clientId,
      client_id_issued_at: issuedAt,
      redirect_uris: metadata.redirect_uris,
      token_endpoint_auth_method: 'none',
      grant_types: metadata.grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(metadata.client_name !== undefined ? { client_name: metadata.client_name } : {}),
      ...(metadata.client_uri !== undefined ? { client_uri: metadata.client_uri } : {}),
      ...(metadata.scope !== undefined ? { scope: metadata.scope } : {}),
      ...(metadata.software_id !== undefined ? { software_id: metadata.software_id } : {}),
      ...(metadata.software_version !== undefined ? { software_version: metadata.software_version } : {}),
    };
    await this.db.run('INSERT INTO oauth_clients (client_id, client_name, redirect_uris, metadata, created_at) VALUES (?, ?, ?, ?, ?)', clientId, metadata.client_name ?? '', JSON.stringify(metadata.redirect_uris), JSON.stringify(registered), new Date(this.now()).toISOString());
    return registered;
  }

  /**
   * The client a `client_id` names: a registered one, or the one its metadata document describes.
   * @returns `{ problem }` (a sentence) when the id is unknown, malformed or its document unusable.
   */
  async find(clientId: string | undefined): Promise<ClientLookup> {
    if (!clientId) return { problem: 'The request has no client_id.' };
    if (clientId.length > 2000) return { problem: 'The client_id is too long.' };
    if (isMetadataDocumentId(clientId)) {
      try {
        return { client: await this.documents.get(clientId) };
      } catch (error) {
        if (error instanceof OAuthError) return { problem: error.message };
        throw error;
      }
    }
    const row = (await this.db.get('SELECT client_id, client_name, redirect_uris FROM oauth_clients WHERE client_id = ?', clientId)) as
      | { client_id: string; client_name: string; redirect_uris: string }
      | undefined;
    if (!row) return { problem: 'The client_id is not registered with this Backyard (register with Dynamic Client Registration, or use a metadata document URL).' };
    return { client: { clientId: row.client_id, clientName: row.client_name, redirectUris: JSON.parse(row.redirect_uris) as string[], kind: 'registered' } };
  }
}

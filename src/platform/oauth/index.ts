import type { Config } from '../../config.js';
import type { Sql } from '../../shared/sql.js';
import { OutboundClient } from '../../shared/outbound/client.js';
import type { PublicUrls } from '../urls.js';
import { OAuthClients } from './clients.js';
import { MetadataDocuments } from './metadataDocuments.js';
import { OAuthService } from './service.js';
import { isLoopbackHost } from './uris.js';

/**
 * The authorization server of a platform, shared by its front ends (`/mcp`, the OAuth
 * endpoints, the dashboard's consent and connections pages) as `Services.oauth`: over the platform's
 * store, issuing tokens for `<public url>/mcp` as the issuer `<public url>`. Client metadata
 * documents are fetched through an outbound client of their own (the operator's allow list is for
 * apps' services, not for clients): public addresses only, and loopback too only while the public
 * URL is loopback and BACKYARD_OAUTH_LOOPBACK_CLIENTS is 1.
 */
export function createOAuthService(db: Sql, urls: PublicUrls, config: Pick<Config, 'oauthLoopbackClients'>): OAuthService {
  const loopbackClients = () => config.oauthLoopbackClients && isLoopbackHost(new URL(urls.base).hostname);
  const documents = new MetadataDocuments({ fetch: new OutboundClient({ allowLoopback: loopbackClients }).fetch, loopbackClients });
  return new OAuthService(db, new OAuthClients(db, documents), () => urls.mcp, () => urls.base);
}

import type { Platform } from '../platform.js';
import { OutboundClient } from '../../shared/outbound/client.js';
import { OAuthClients } from './clients.js';
import { MetadataDocuments } from './metadataDocuments.js';
import { OAuthService } from './service.js';
import { isLoopbackHost } from './uris.js';

const services = new WeakMap<Platform, OAuthService>();

/**
 * The authorization server of a platform (issue 15), shared by its front ends (`/mcp`, the OAuth
 * endpoints, the dashboard's consent and connections pages): over its `platform.db`, issuing tokens
 * for `<public url>/mcp` as the issuer `<public url>`. Client metadata documents are fetched through
 * an outbound client of their own (the operator's allow list is for apps' services, not for
 * clients): public addresses only, and loopback too only while the public URL is loopback and
 * BACKYARD_OAUTH_LOOPBACK_CLIENTS is 1.
 */
export function oauthOf(platform: Pick<Platform, 'db' | 'services' | 'config'>): OAuthService {
  let service = services.get(platform as Platform);
  if (!service) {
    const { urls } = platform.services;
    const loopbackClients = () => platform.config.oauthLoopbackClients && isLoopbackHost(new URL(urls.base).hostname);
    const documents = new MetadataDocuments({ fetch: new OutboundClient({ allowLoopback: loopbackClients }).fetch, loopbackClients });
    service = new OAuthService(platform.db, new OAuthClients(platform.db, documents), () => urls.mcp, () => urls.base);
    services.set(platform as Platform, service);
  }
  return service;
}

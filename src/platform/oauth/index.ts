import { publicFetch } from './publicFetch.js';
import type { Platform } from '../platform.js';
import { OAuthClients } from './clients.js';
import { MetadataDocuments } from './metadataDocuments.js';
import { OAuthService } from './service.js';

const services = new WeakMap<Platform, OAuthService>();

/**
 * The authorization server of a platform (issue 15), shared by its front ends (`/mcp`, the OAuth
 * endpoints, the dashboard's consent and connections pages): over its `platform.db`, issuing tokens
 * for `<public url>/mcp` as the issuer `<public url>`.
 */
export function oauthOf(platform: Pick<Platform, 'db' | 'services'>): OAuthService {
  let service = services.get(platform as Platform);
  if (!service) {
    const { urls } = platform.services;
    service = new OAuthService(platform.db, new OAuthClients(platform.db, new MetadataDocuments({}, publicFetch)), () => urls.mcp, () => urls.base);
    services.set(platform as Platform, service);
  }
  return service;
}

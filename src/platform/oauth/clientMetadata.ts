import { z } from 'zod';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { redirectUriProblem } from './uris.js';

/** A client Backyard knows: registered (RFC 7591) or described by its metadata document. */
export interface OAuthClient {
  clientId: string;
  /** As the client names itself: untrusted text, shown escaped. '' when it gave none. */
  clientName: string;
  /** Compared character for character with the `redirect_uri` of requests (OAuth 2.1 §2.3.1). */
  redirectUris: string[];
  kind: 'registered' | 'metadata-document';
}

/**
 * The client metadata fields Backyard reads (RFC 7591 §2), from a registration request or a client
 * metadata document. Other fields are dropped. Shapes only; `checkClientMetadata` applies the rules.
 */
export const ClientMetadataSchema = z.object({
  client_id: z.string().max(2000).optional(),
  redirect_uris: z.array(z.string().max(2000)).min(1).max(20),
  client_name: z.string().max(200).optional(),
  client_uri: z.string().max(2000).optional(),
  logo_uri: z.string().max(2000).optional(),
  grant_types: z.array(z.string().max(100)).max(10).optional(),
  response_types: z.array(z.string().max(100)).max(10).optional(),
  token_endpoint_auth_method: z.string().max(100).optional(),
  scope: z.string().max(1000).optional(),
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(200).optional(),
});
export type ClientMetadata = z.infer<typeof ClientMetadataSchema>;

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

/**
 * Parses and checks client metadata (RFC 7591 §2 and §3.2.2): redirect URIs by `redirectUriProblem`,
 * grant types among `authorization_code` and `refresh_token`, response type `code`. The
 * `token_endpoint_auth_method` is not checked here: registration answers `none` whatever was asked
 * (RFC 7591 §3.2.1 lets the server replace a value), metadata documents are checked by their reader.
 * @throws OAuthError `invalid_redirect_uri` or `invalid_client_metadata`, naming the field.
 */
export function checkClientMetadata(input: unknown): ClientMetadata {
  const parsed = ClientMetadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'the document';
    const code = issue.path[0] === 'redirect_uris' ? OAuthErrorCode.InvalidRedirectUri : OAuthErrorCode.InvalidClientMetadata;
    throw new OAuthError(code, `The client metadata is not valid: ${field}: ${issue.message}.`);
  }
  const metadata = parsed.data;
  for (const uri of metadata.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError(OAuthErrorCode.InvalidRedirectUri, `The client metadata is not valid: ${problem}.`);
  }
  const badGrant = metadata.grant_types?.find((g) => !GRANT_TYPES.has(g));
  if (badGrant) {
    throw new OAuthError(OAuthErrorCode.InvalidClientMetadata, `The grant type "${badGrant}" is not supported: use authorization_code (and refresh_token).`);
  }
  const badResponse = metadata.response_types?.find((r) => r !== 'code');
  if (badResponse) {
    throw new OAuthError(OAuthErrorCode.InvalidClientMetadata, `The response type "${badResponse}" is not supported: use code.`);
  }
  return metadata;
}

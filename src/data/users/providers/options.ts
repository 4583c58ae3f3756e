import { z } from 'zod';

/**
 * The `auth` app setting (Parse Server's `auth` option, "Third-party authentication" in its guide):
 * provider name → its options, under Parse Server 9's option names. Each built-in provider's
 * endpoints are options too (`jwksUri`, `tokenUrl`, `userUrl`, `graphUrl`), defaulting to the
 * provider's own, so that an app can be pointed at a stand-in (tests, an offline machine); they are
 * fetched only if public or listed in BACKYARD_CLOUD_ALLOW_HOSTS (shared/outbound/client.ts). Any other
 * name with `"oidc": true` is a generic OpenID Connect provider of the app's choosing.
 */

const url = (example: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` });
const text = z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' });
/** One client id, or several (an app with an iOS and a web client has two audiences). */
const audience = z.union([text, z.array(text, { error: 'must be a string or a list of strings' }).min(1, { error: 'must not be an empty list' })], {
  error: 'must be a string or a list of strings',
});

export const appleOptions = z.strictObject({ clientId: audience, jwksUri: url('https://appleid.apple.com/auth/keys').optional() });
export const googleOptions = z.strictObject({ clientId: audience, jwksUri: url('https://www.googleapis.com/oauth2/v3/certs').optional() });
export const facebookOptions = z.strictObject({
  appIds: z.array(text, { error: 'must be a list of Facebook app ids' }).min(1, { error: 'must name at least one Facebook app id' }),
  appSecret: text.optional(),
  jwksUri: url('https://www.facebook.com/.well-known/oauth/openid/jwks/').optional(),
  graphUrl: url('https://graph.facebook.com/').optional(),
});
/** GitHub and Microsoft: a code is exchanged for an access token (Parse Server 9's BaseCodeAuthAdapter). */
const codeOptions = (tokenUrl: string, userUrl: string) =>
  z
    .strictObject({
      clientId: text.optional(),
      clientSecret: text.optional(),
      /** Parse Server's `enableInsecureAuth`: a client's own access token is accepted in place of a code. */
      enableInsecureAuth: z.boolean({ error: 'must be true or false' }).optional(),
      tokenUrl: url(tokenUrl).optional(),
      userUrl: url(userUrl).optional(),
    })
    .superRefine((o, ctx) => {
      if (o.enableInsecureAuth) return;
      if (!o.clientId) ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'is required (the OAuth app\'s client id), unless enableInsecureAuth is true' });
      if (!o.clientSecret) ctx.addIssue({ code: 'custom', path: ['clientSecret'], message: 'is required (the OAuth app\'s client secret), unless enableInsecureAuth is true' });
    });
export const githubOptions = codeOptions('https://github.com/login/oauth/access_token', 'https://api.github.com/user');
export const microsoftOptions = codeOptions('https://login.microsoftonline.com/common/oauth2/v2.0/token', 'https://graph.microsoft.com/v1.0/me');
export const oidcOptions = z.strictObject({
  oidc: z.literal(true, { error: 'must be true (a generic OpenID Connect provider)' }),
  issuer: url('https://login.example.com'),
  clientId: audience,
  /** Else read from the issuer's `/.well-known/openid-configuration`. */
  jwksUri: url('https://login.example.com/jwks').optional(),
});

export const BUILT_IN_OPTIONS = { apple: appleOptions, google: googleOptions, facebook: facebookOptions, github: githubOptions, microsoft: microsoftOptions } as const;
export type BuiltInProvider = keyof typeof BUILT_IN_OPTIONS;
export const isBuiltIn = (name: string): name is BuiltInProvider => Object.hasOwn(BUILT_IN_OPTIONS, name);

export type OidcOptions = z.output<typeof oidcOptions>;
export type ProviderOptions = { [K in BuiltInProvider]: z.output<(typeof BUILT_IN_OPTIONS)[K]> }[BuiltInProvider] | OidcOptions;

/** A provider name as `authData` keys it. */
const PROVIDER_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The `auth` setting: `{"google": {"clientId": "..."}, "myidp": {"oidc": true, "issuer": "...", "clientId": "..."}}`.
 * Issues name the provider and the option (`auth.google.clientId`).
 */
export const authSettings = z
  .record(z.string(), z.unknown(), { error: 'must be an object of sign-in providers, such as {"google": {"clientId": "<client id>.apps.googleusercontent.com"}}' })
  .superRefine((providers, ctx) => {
    for (const [name, options] of Object.entries(providers)) {
      if (name === 'anonymous') {
        ctx.addIssue({ code: 'custom', path: [name], message: 'needs no options: anonymous users are on unless enableAnonymousUsers is false' });
        continue;
      }
      if (!PROVIDER_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is not a provider name (letters, digits and _, starting with a letter)' });
        continue;
      }
      const schema = isBuiltIn(name) ? BUILT_IN_OPTIONS[name] : oidcOptions;
      const parsed = schema.safeParse(options);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const message =
            issue.code === 'unrecognized_keys' ? `has no option ${issue.keys.map((k) => `"${k}"`).join(', ')}` : issue.message;
          ctx.addIssue({ code: 'custom', path: [name, ...issue.path.map(String)], message: isBuiltIn(name) || issue.path.length ? message : `${message}; a provider other than ${Object.keys(BUILT_IN_OPTIONS).join(', ')} must be {"oidc": true, "issuer": ..., "clientId": ...}` });
        }
      }
    }
  })
  .transform((providers) => providers as Record<string, ProviderOptions>);

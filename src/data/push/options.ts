import { z } from 'zod';

/**
 * The `push` app setting: how an app's pushes are delivered, in the shape of Parse Server's push
 * adapter (`@parse/push-adapter`): `ios` (APNs with a token key), `android` (Firebase Cloud
 * Messaging HTTP v1 with a service account) and `web` (Web Push with VAPID keys). `url` points a
 * service at another address (a stand-in); addresses are requested only if public or allowed
 * (BACKYARD_CLOUD_ALLOW_HOSTS).
 */
const text = (what: string) => z.string({ error: `must be ${what}` }).min(1, { error: `must be ${what}` });
const url = (example: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` });

export const pushSettings = z
  .strictObject(
    {
      ios: z
        .strictObject({
          token: z.strictObject({
            key: text('the text of the .p8 signing key (-----BEGIN PRIVATE KEY-----...)'),
            keyId: text("the key's id (10 characters)"),
            teamId: text('your Apple team id'),
          }),
          topic: text("the app's bundle id, such as com.example.app"),
          production: z.boolean({ error: 'must be true or false' }).default(false),
          url: url('https://api.push.apple.com').optional(),
        })
        .optional(),
      android: z
        .strictObject({
          firebaseServiceAccount: z.looseObject({
            project_id: text("the Firebase project's id"),
            client_email: text("the service account's email"),
            private_key: text("the service account's private key (PEM)"),
            token_uri: url('https://oauth2.googleapis.com/token').optional(),
          }),
          url: url('https://fcm.googleapis.com').optional(),
        })
        .optional(),
      web: z
        .strictObject({
          vapidDetails: z.strictObject({
            subject: text('a mailto: or https: address push services can reach you at'),
            publicKey: text('the VAPID public key (base64url)'),
            privateKey: text('the VAPID private key (base64url)'),
          }),
        })
        .optional(),
    },
    { error: 'must be an object such as {"ios": {...}, "android": {...}, "web": {...}}' },
  )
  .nullable()
  .default(null);

export type PushSettings = NonNullable<z.output<typeof pushSettings>>;

declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';
  /** Decrypts an RFC 8188 body; for `aes128gcm` Web Push, with the receiver's key pair and auth secret (RFC 8291). */
  export function decrypt(buffer: Buffer, params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: Buffer }): Buffer;
  const ece: { decrypt: typeof decrypt };
  export default ece;
}

import type { Auth } from '../auth/context.js';
import type { DataStore } from '../store.js';
import { ParseCode, ParseError } from '../errors.js';
import type { StoredRow } from '../storage/adapter.js';
import { isPlainObject } from '../values.js';

/**
 * Parse's rules for `_Installation` writes (Parse Server 9's `RestWrite.handleInstallation`): the
 * ids a device is known by (`installationId`, `deviceToken`) are normalized, a new installation
 * needs one and a `deviceType`, they may not change once set, a save that names an installation
 * that exists updates it, and a device token belongs to one installation (others holding it are
 * deleted once the write succeeds, Parse Server's default `duplicateDeviceTokenAction`; when a
 * row holding only the token meets the row the write names, the token's row is kept, Parse
 * Server's default `duplicateDeviceTokenMergePriority`). The `X-Parse-Installation-Id` header finds
 * the caller's installation but is never written as its `installationId`.
 */

/**
 * What a write becomes: the installation to update (when one matches), the body to write, and the
 * installations that lose the device token, to delete once the write succeeded (a refused write
 * leaves them).
 */
export interface InstallationWrite {
  objectId?: string;
  body: Record<string, unknown>;
  remove: string[];
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * @param objectId the installation a PUT names; undefined for a POST.
 * @throws ParseError 135 (no id field, no deviceType), 136 (an id or the deviceType changed), 132
 *   (a deviceToken held by several installations and no installationId), 101 (no such installation).
 */
export async function prepareInstallationWrite(store: DataStore, given: unknown, auth: Auth, objectId?: string): Promise<InstallationWrite> {
  if (!isPlainObject(given)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
  const body = { ...given };
  if (!objectId && !text(body.deviceToken) && !text(body.installationId) && !auth.installationId) {
    throw new ParseError(ParseCode.MISSING_REQUIRED_FIELD, 'at least one ID field (deviceToken, installationId) must be specified in this operation');
  }
  if (typeof body.deviceToken === 'string' && body.deviceToken.length === 64) body.deviceToken = body.deviceToken.toLowerCase();
  if (typeof body.installationId === 'string') body.installationId = body.installationId.toLowerCase();
  let installationId = text(body.installationId);
  // The header's id finds the client's installation but is not written: Parse Server's
  // handleInstallation matches on it and leaves the body as it came.
  if (!installationId && !auth.master) installationId = auth.installationId?.toLowerCase();
  const deviceToken = text(body.deviceToken);
  if (objectId && !deviceToken && !installationId && body.deviceType === undefined) return { objectId, body, remove: [] };

  const or: Array<Record<string, unknown>> = [];
  if (objectId) or.push({ objectId });
  if (installationId) or.push({ installationId });
  if (deviceToken) or.push({ deviceToken });
  const rows = await store.rows('_Installation', { where: { $or: or }, limit: 1000 });
  const objectIdMatch = objectId ? rows.find((r) => r.objectId === objectId) : undefined;
  const installationIdMatch = installationId ? rows.find((r) => r.data.installationId === installationId) : undefined;
  const deviceTokenMatches = deviceToken ? rows.filter((r) => r.data.deviceToken === deviceToken) : [];

  if (objectId) {
    if (!objectIdMatch) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found for update.');
    const current = objectIdMatch.data;
    if (text(body.installationId) && current.installationId && body.installationId !== current.installationId) {
      throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, 'installationId may not be changed in this operation');
    }
    if (deviceToken && current.deviceToken && deviceToken !== current.deviceToken && !text(body.installationId) && !current.installationId) {
      throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, 'deviceToken may not be changed in this operation');
    }
    if (body.deviceType !== undefined && body.deviceType !== current.deviceType) {
      throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, 'deviceType may not be changed in this operation');
    }
  }
  const idMatch: StoredRow | undefined = (installationId && installationIdMatch) || objectIdMatch;
  if (!objectId && body.deviceType === undefined && !idMatch) throw new ParseError(ParseCode.MISSING_REQUIRED_FIELD, 'deviceType must be specified in this operation');

  const others = (keep: (row: StoredRow) => boolean) =>
    deviceTokenMatches.filter((r) => !keep(r) && (body.appIdentifier === undefined || r.data.appIdentifier === body.appIdentifier)).map((r) => r.objectId);
  if (!idMatch) {
    if (deviceTokenMatches.length === 0) return { body, remove: [] };
    if (deviceTokenMatches.length === 1 && (!deviceTokenMatches[0]!.data.installationId || !installationId)) return { objectId: deviceTokenMatches[0]!.objectId, body: strip(body), remove: [] };
    if (!text(body.installationId)) throw new ParseError(ParseCode.INVALID_INSTALLATION_ID, 'Must specify installationId when deviceToken matches multiple Installation objects');
    return { body, remove: others((r) => r.data.installationId === installationId) };
  }
  const tokenOnly = deviceTokenMatches.length === 1 && !deviceTokenMatches[0]!.data.installationId ? deviceTokenMatches[0]! : undefined;
  if (tokenOnly && tokenOnly.objectId !== idMatch.objectId) {
    // The token was saved alone before this device had an installationId: the two rows are one
    // device. As Parse Server 9's default `duplicateDeviceTokenMergePriority: 'deviceToken'`
    // (parse-server src/InstallationDedup.js, applyDuplicateDeviceTokenMerge), the token's row is
    // kept and written, and the row the write named goes.
    return { objectId: tokenOnly.objectId, body: strip(body), remove: [idMatch.objectId] };
  }
  let remove: string[] = [];
  if (deviceToken && idMatch.data.deviceToken !== deviceToken) {
    remove = others((r) => r.objectId === idMatch.objectId || (installationId !== undefined && r.data.installationId === installationId));
  }
  return { objectId: idMatch.objectId, body: strip(body), remove };
}

/** A body that updates: the fields a create would set for the server are not the client's to send again. */
function strip(body: Record<string, unknown>): Record<string, unknown> {
  const { objectId: _o, createdAt: _c, ...rest } = body;
  return rest;
}

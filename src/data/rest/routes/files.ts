import type { Auth } from '../../auth/context.js';
import { ParseCode, ParseError } from '../../errors.js';
import { tooLarge, type FileStore, type UploadBody, type UploadOptions } from '../../files.js';
import { checkProhibitedKeywords } from '../../objects/keywords.js';
import { isPlainObject } from '../../values.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok, type DataRequest } from '../types.js';
import { requireMaster } from './classes.js';
import { extensionAllowed, maxUploadBytes, type ServerSettings } from '../../settings.js';

/**
 * Who may upload: the master key, and the callers the app's `fileUpload` options let (settings.ts;
 * by default, as Parse Server 5.0 and later, logged-in users but not callers without a session nor
 * anonymous users).
 * @throws ParseError 130 when they do not let this caller upload (Parse Server's texts).
 */
function checkMayUpload(auth: Auth, { fileUpload: FILE_UPLOAD }: ServerSettings): void {
  if (auth.master) return;
  const authData = auth.user?.data.authData;
  const anonymous = isPlainObject(authData) && authData.anonymous !== undefined && authData.anonymous !== null;
  if (!auth.user && !FILE_UPLOAD.enableForPublic) {
    throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'File upload by public is disabled: upload as a logged-in user (with a session token) or with the master key.');
  }
  if (anonymous && !FILE_UPLOAD.enableForAnonymousUser) throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'File upload by anonymous user is disabled.');
  if (auth.user && !anonymous && !FILE_UPLOAD.enableForAuthenticatedUser) {
    throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'File upload by authenticated user is disabled.');
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL = /^data:([^;,]*)(;[^,]*)?,/;

const stringMap = (value: unknown): Record<string, unknown> | undefined => (isPlainObject(value) ? value : undefined);

/**
 * The bytes and content type of an upload: the raw body (as it arrives) with its Content-Type, or
 * the JS SDK's JSON form `{base64, _ContentType?, fileData?: {metadata?, tags?}}` (`base64` may be
 * a data URL).
 * @throws ParseError 130 FILE_SAVE_ERROR for a body that is neither, or invalid base64; 105 for a
 *   prohibited keyword in the metadata or tags (objects/keywords.ts); 129 (413) for a raw body whose
 *   Content-Length is above `maxSize`, before any of it is read (as Parse Server's streamed uploads).
 */
function readUpload(req: DataRequest, maxSize: number): { data: UploadBody; options: UploadOptions } {
  if (req.raw) {
    if (req.raw.length !== undefined && req.raw.length > maxSize) throw tooLarge(maxSize);
    return { data: req.raw.body, options: { contentType: req.raw.contentType || undefined } };
  }
  const body = req.body;
  if (!isPlainObject(body) || typeof body.base64 !== 'string') {
    throw new ParseError(
      ParseCode.FILE_SAVE_ERROR,
      'Invalid file upload: send the bytes as the body with their Content-Type (not application/json or text/plain), or JSON {"base64": "..."}.',
    );
  }
  let base64 = body.base64;
  let contentType: string | undefined;
  const dataUrl = DATA_URL.exec(base64);
  if (dataUrl) {
    contentType = dataUrl[1] || undefined;
    base64 = base64.slice(dataUrl[0].length);
  }
  base64 = base64.replace(/\s+/g, '');
  if (!BASE64.test(base64) || base64.length % 4 === 1) throw new ParseError(ParseCode.FILE_SAVE_ERROR, 'Invalid file upload: base64 holds characters outside A-Z a-z 0-9 + / =.');
  // The plugin removes the SDK's `_ContentType` from bodies today; honour it if it ever arrives.
  if (typeof body._ContentType === 'string') contentType = body._ContentType;
  const fileData = stringMap(body.fileData);
  // Parse Server's FilesRouter scans them as it scans object writes (GHSA-p6h4-93qp-jhcm).
  checkProhibitedKeywords(fileData?.metadata);
  checkProhibitedKeywords(fileData?.tags);
  return {
    data: [Buffer.from(base64, 'base64')],
    options: { contentType, metadata: stringMap(fileData?.metadata), tags: stringMap(fileData?.tags) },
  };
}

/** The file store of the request's app (on disk or in PostgreSQL: StorageProvider.files). */
export const filesOf = (req: Pick<DataRequest, 'apps' | 'keys'>): FileStore => req.apps.files(req.keys.applicationId);

/**
 * `/files/<name>` (Parse REST guide, "Files"): upload answers 201 `{url, name}` with `Location`
 * (the stored name is `<32 hex>_<name>`), and 122 "Filename not provided." without a name; a raw
 * body is stored as it arrives, within the app's `maxUploadSize` (129, 413 above it); delete needs the master key and answers 200 `{}`, or 153
 * FILE_DELETE_ERROR for an unknown file. Downloads (`GET /files/<appId>/<name>`) need no keys and
 * are answered by `public.ts`.
 */
export function fileRoutes(router: DataRouter): void {
  router.on('POST', '/files', () => {
    throw new ParseError(ParseCode.INVALID_FILE_NAME, 'Filename not provided.');
  });
  // Files are stored outside a transactional batch's transaction, which could not take them back.
  router.on('POST', '/files/:name', async (req, { name }) => {
    refuseInTransaction(req);
    const settings = req.engine.settings();
    checkMayUpload(req.auth, settings);
    const maxSize = maxUploadBytes(settings);
    const { data, options } = readUpload(req, maxSize);
    options.maxSize = maxSize;
    if (!req.auth.master) options.allowExtension = (extension) => extensionAllowed(settings, extension);
    const stored = await filesOf(req).save(name!, data, options);
    const url = req.engine.fileUrl(stored.name);
    return ok({ url, name: stored.name }, 201, { location: url });
  });
  router.on('DELETE', '/files/:name', async (req, { name }) => {
    refuseInTransaction(req);
    requireMaster(req);
    if (!(await filesOf(req).delete(name!))) throw new ParseError(ParseCode.FILE_DELETE_ERROR, `Could not delete file ${name}: there is no such file.`);
    return ok({});
  });
}

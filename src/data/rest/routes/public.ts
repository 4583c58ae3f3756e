import { ParseCode } from '../../errors.js';
import { FileStore, servedContentType } from '../../files.js';
import type { PublicRoute } from '../handler.js';
import type { DataResponse, RouteApps } from '../types.js';
import { mailPages } from './pages.js';

const FILE_PATH = /^\/files\/([^/]+)\/([^/]+)$/;
const METADATA_PATH = /^\/files\/([^/]+)\/metadata\/(.+)$/;

/**
 * Headers of every download. A file is served from the data API's origin, which the dashboard
 * shares, so its content may not run there: `sandbox` gives a page an opaque origin and `nosniff`
 * stops browsers guessing a type that could.
 */
const DOWNLOAD_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': 'sandbox',
};

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

const notFound = (): DataResponse => ({ status: 404, body: undefined, raw: { data: Buffer.from('File not found.'), contentType: 'text/plain; charset=utf-8' } });

/**
 * The routes of the data API answered without keys, as Parse Server answers them (`PublicRoute`
 * of `handler.ts`; it calls this for GET requests only, with the path below the mount):
 * - `GET /health`: 200 `{"status": "ok"}`;
 * - `GET /files/<appId>/<name>`: the file's bytes with its stored content type (the URLs that
 *   `DataEngine.fileUrl` gives); 403 `{code: 119}` for an unknown application id and 404
 *   `File not found.` (text, as Parse Server) for an unknown file.
 * - `GET /files/<appId>/metadata/<name>`: 200 `{metadata}` (the upload's `fileData.metadata`, `{}`
 *   when none) for a stored file, and 200 `{}` for an unknown file or application, as Parse Server's
 *   FilesRouter answers through a files adapter that keeps metadata (GridFS);
 * - `/apps/<appId>/...`: the pages of verification and password reset mails (pages.ts).
 * Any other path: undefined, so that the keyed routes answer it.
 */
export function publicRoutes(apps: RouteApps): PublicRoute {
  const download = async (match: RegExpExecArray): Promise<DataResponse> => {
    // The path may arrive decoded or not; names that pass Parse's rule hold no `%`, so decoding is safe.
    const appId = decode(match[1]!);
    const name = decode(match[2]!);
    if (appId === undefined || name === undefined) return notFound();
    if (!(await apps.keys(appId))) return { status: 403, body: { code: ParseCode.OPERATION_FORBIDDEN, error: 'Invalid application ID.' } };
    const file = await new FileStore(apps.filesFolder(appId)).read(name);
    if (!file) return notFound();
    return { status: 200, body: undefined, headers: DOWNLOAD_HEADERS, raw: { data: file.data, contentType: servedContentType(file.contentType) } };
  };
  const metadata = async (match: RegExpExecArray): Promise<DataResponse> => {
    const appId = decode(match[1]!);
    const name = decode(match[2]!);
    const info = appId !== undefined && name !== undefined && (await apps.keys(appId)) ? new FileStore(apps.filesFolder(appId)).info(name) : undefined;
    return { status: 200, body: info ? { metadata: info.metadata ?? {} } : {} };
  };
  const pages = mailPages(apps);
  return (method, path, query, body) => {
    if (path.startsWith('/apps/')) return pages(method, path, query, body);
    if (method !== 'GET') return undefined;
    if (path === '/health') return { status: 200, body: { status: 'ok' } };
    const described = METADATA_PATH.exec(path);
    if (described) return metadata(described);
    const match = FILE_PATH.exec(path);
    return match ? download(match) : undefined;
  };
}

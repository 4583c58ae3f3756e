import { ParseCode } from '../../errors.js';
import { servedContentType } from '../../files.js';
import { parseByteRange } from '../byteRange.js';
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
 *   `DataEngine.fileUrl` gives), streamed from the app's file store; 403 `{code: 119}` for an
 *   unknown application id and 404 `File not found.` (text, as Parse Server) for an unknown file.
 *   A `Range` of one span of bytes (byteRange.ts) is answered 206 with `Content-Range`, as Parse
 *   Server's GridFS adapter answers it (but with the last byte's index, as RFC 9110 says, where
 *   Parse Server gives the one after it), and 416 with the size in `Content-Range` for a
 *   range past the end (RFC 9110, section 15.5.17), where Parse Server answers 206 and no bytes
 *   (docs/parse-differences.md); an `If-Range` request is answered whole (no validators are kept
 *   to compare it with).
 * - `GET /files/<appId>/metadata/<name>`: 200 `{metadata}` (the upload's `fileData.metadata`, `{}`
 *   when none) for a stored file, and 200 `{}` for an unknown file or application, as Parse Server's
 *   FilesRouter answers through a files adapter that keeps metadata (GridFS);
 * - `/apps/<appId>/...`: the pages of verification and password reset mails (pages.ts).
 * Any other path: undefined, so that the keyed routes answer it.
 */
export function publicRoutes(apps: RouteApps): PublicRoute {
  const download = async (match: RegExpExecArray, range: string | undefined): Promise<DataResponse> => {
    // The path may arrive decoded or not; names that pass Parse's rule hold no `%`, so decoding is safe.
    const appId = decode(match[1]!);
    const name = decode(match[2]!);
    if (appId === undefined || name === undefined) return notFound();
    if (!(await apps.keys(appId))) return { status: 403, body: { code: ParseCode.OPERATION_FORBIDDEN, error: 'Invalid application ID.' } };
    const file = await apps.files(appId).open(name);
    if (!file) return notFound();
    const contentType = servedContentType(file.contentType);
    const wanted = parseByteRange(range, file.size);
    if (wanted === 'unsatisfiable') {
      return {
        status: 416,
        body: undefined,
        headers: { ...DOWNLOAD_HEADERS, 'accept-ranges': 'bytes', 'content-range': `bytes */${file.size}` },
        raw: { data: Buffer.from(`Range not satisfiable: the file holds ${file.size} bytes.`), contentType: 'text/plain; charset=utf-8' },
      };
    }
    if (!wanted) {
      return { status: 200, body: undefined, headers: { ...DOWNLOAD_HEADERS, 'accept-ranges': 'bytes' }, stream: { body: file.read(0, file.size - 1), contentType, length: file.size } };
    }
    const { start, end } = wanted;
    return {
      status: 206,
      body: undefined,
      headers: { ...DOWNLOAD_HEADERS, 'accept-ranges': 'bytes', 'content-range': `bytes ${start}-${end}/${file.size}` },
      stream: { body: file.read(start, end), contentType, length: end - start + 1 },
    };
  };
  const metadata = async (match: RegExpExecArray): Promise<DataResponse> => {
    const appId = decode(match[1]!);
    const name = decode(match[2]!);
    const info = appId !== undefined && name !== undefined && (await apps.keys(appId)) ? await apps.files(appId).info(name) : undefined;
    return { status: 200, body: info ? { metadata: info.metadata ?? {} } : {} };
  };
  const pages = mailPages(apps);
  return (method, path, query, body, headers) => {
    if (path.startsWith('/apps/')) return pages(method, path, query, body, headers);
    if (method !== 'GET') return undefined;
    if (path === '/health') return { status: 200, body: { status: 'ok' } };
    const described = METADATA_PATH.exec(path);
    if (described) return metadata(described);
    const match = FILE_PATH.exec(path);
    if (!match) return undefined;
    return download(match, headers['if-range'] === undefined && typeof headers.range === 'string' ? headers.range : undefined);
  };
}

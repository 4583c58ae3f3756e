/**
 * The differential test's two sides: the same requests go to Parse Server 9
 * (the oracle, on PostgreSQL) and to a Backend App, and the answers are compared after masking what
 * differs by nature (objectIds, dates, session tokens, error texts).
 */

/** One answer of a data API. `body` is the parsed JSON, or the text when it is not JSON. */
export interface Answer {
  status: number;
  body: any;
}

/** Options of one request. Without `master` the REST API key is sent. */
export interface CallOptions {
  /** Sent as JSON unless `contentType` says otherwise (then it must be a string). */
  body?: unknown;
  master?: boolean;
  sessionToken?: string;
  headers?: Record<string, string>;
  contentType?: string;
  /** Query string parameters; objects and arrays are sent as JSON. */
  query?: Record<string, unknown>;
}

/** What a case sees of one server. */
export interface CaseApi {
  /** `path` below the data API's mount (`/classes/X`, `/users`, `/batch`, …). */
  call(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /**
   * A class name unique to this case and run, the same on both servers (so that class names may
   * appear in bodies and answers): `base` + a suffix.
   */
  cls(base: string): string;
  /** Which server this is: cases may not branch on it except to build their requests' addresses. */
  readonly side: 'parse' | 'backyard';
}

/**
 * One differential case. `run` is called once per server and returns what is compared (usually a
 * list of answers); both sides must return equal values after `mask`.
 */
export interface DiffCase {
  name: string;
  run(api: CaseApi): Promise<unknown>;
  /**
   * A deliberate difference (a row of docs/parse-differences.md): Backyard's masked answer must equal
   * `backyard`, and Parse Server's is not compared.
   */
  known?: { reason: string; backyard: unknown };
  /** Compare error texts too (by default only `code` is compared). */
  errorText?: boolean;
}

const DATE_KEYS = new Set(['createdAt', 'updatedAt', 'expiresAt', '_created_at', '_updated_at']);

/**
 * Masks a value for comparison. objectIds (strings under an `objectId` key, and any 10-character id
 * already seen, also inside longer strings such as a Location) become `<id1>`, `<id2>`, … in order of
 * first appearance over a traversal with sorted keys (object keys too, as in an ACL), so equal structures mask equally whatever
 * order a server writes keys in; creation and update dates and `iso` values of those keys become
 * `<date>`; session tokens `<token>`; error texts `<error>` unless `errorText`.
 */
export function mask(value: unknown, options: { errorText?: boolean } = {}): unknown {
  const ids = new Map<string, string>();
  const collect = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(collect);
    if (v && typeof v === 'object') {
      for (const key of Object.keys(v).sort()) {
        const child = (v as Record<string, unknown>)[key];
        if (key === 'objectId' && typeof child === 'string' && !ids.has(child)) ids.set(child, `<id${ids.size + 1}>`);
        collect(child);
      }
    }
  };
  collect(value);
  const replaceIds = (s: string): string => {
    const whole = ids.get(s);
    if (whole) return whole;
    let out = s;
    for (const [id, name] of ids) if (out.includes(id)) out = out.split(id).join(name);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map((item) => walk(item));
    if (v && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(record).sort()) {
        const child = record[k];
        if (DATE_KEYS.has(k) && (typeof child === 'string' || (child && typeof child === 'object'))) out[k] = '<date>';
        else if (k === 'sessionToken' && typeof child === 'string') out[k] = '<token>';
        else if (k === 'error' && typeof child === 'string' && !options.errorText && 'code' in record) out[k] = '<error>';
        else out[ids.get(k) ?? k] = walk(child);
      }
      return out;
    }
    return typeof v === 'string' && ids.size ? replaceIds(v) : v;
  };
  return walk(value);
}

/** A `CaseApi` over HTTP: `baseURL` is the data API's root (no trailing slash). */
export function httpCaseApi(
  side: 'parse' | 'backyard',
  baseURL: string,
  keys: { appId: string; restKey: string; masterKey: string },
  suffix: string,
): CaseApi {
  return {
    side,
    cls: (base) => `${base}_${suffix}`,
    call: async (method, path, options = {}) => {
      const headers: Record<string, string> = { 'X-Parse-Application-Id': keys.appId, ...options.headers };
      if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
      else headers['X-Parse-REST-API-Key'] = keys.restKey;
      if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = options.contentType ? String(options.body) : JSON.stringify(options.body);
        headers['content-type'] = options.contentType ?? 'application/json';
      }
      let query = '';
      if (options.query) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(options.query)) params.set(k, typeof v === 'string' ? v : JSON.stringify(v));
        query = `?${params}`;
      }
      const response = await fetch(`${baseURL}${path}${query}`, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: compared as text
      }
      return { status: response.status, body: parsed };
    },
  };
}

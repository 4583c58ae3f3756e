import { parse as parseFlat } from 'fast-querystring';
import qs from 'qs';

/** A key with brackets, as typed or percent-encoded (`where[name]`, `where%5Bname%5D`). */
const BRACKETED_KEY = /(?:^|&)[^=&]*(?:\[|%5B)/i;

/**
 * The parameters of a request's query string. Plain `key=value` pairs are read flat (fast-querystring);
 * a string with a bracketed key (`where[username][$regex]=x`, `keys[]=a`) is read with qs's nesting,
 * as Parse Server's Express reads every query string (`'query parser': 'extended'`), so that such a
 * `where` arrives as the object it spells. Values stay strings, as there.
 */
export function parseQueryString(text: string): Record<string, unknown> {
  if (!BRACKETED_KEY.test(text)) return { ...(parseFlat(text) as Record<string, unknown>) };
  return qs.parse(text) as Record<string, unknown>;
}

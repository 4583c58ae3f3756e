import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';

/** One entry of Parse Server's `requestKeywordDenylist`: a key, a value, or both, each a regular expression. */
interface Keyword {
  key?: string;
  value?: string;
}

/**
 * Parse Server's default `requestKeywordDenylist` (its Options/Definitions), added after advisory
 * GHSA-p6h4-93qp-jhcm (remote code execution through prototype pollution): the keys `constructor`
 * and `__proto__`, and `_bsontype` with the value `Code`. As in Parse Server, a string is a regular
 * expression tested against each key (so `constructorName` matches too) and each string value.
 */
const REQUEST_KEYWORD_DENYLIST: readonly Keyword[] = [{ key: '_bsontype', value: 'Code' }, { key: 'constructor' }, { key: '__proto__' }];

const matcher = (pattern: string | undefined) => {
  if (pattern === undefined) return undefined;
  const regex = new RegExp(pattern);
  return (candidate: unknown) => typeof candidate === 'string' && regex.test(candidate);
};

const DENYLIST = REQUEST_KEYWORD_DENYLIST.map((keyword) => ({
  message: `Prohibited keyword in request data: ${JSON.stringify(keyword)}.`,
  key: matcher(keyword.key),
  value: matcher(keyword.value),
}));

/** Whether some entry at any depth of `data` (objects and arrays, every sibling: GHSA-q342-9w2p-57fp) matches. */
function containsKeyword(data: unknown, keyword: (typeof DENYLIST)[number]): boolean {
  const stack = [data];
  while (stack.length) {
    const current = stack.pop();
    if (!isPlainObject(current) && !Array.isArray(current)) continue;
    for (const [k, v] of Object.entries(current)) {
      if ((!keyword.key || keyword.key(k)) && (!keyword.value || keyword.value(v))) return true;
      stack.push(v);
    }
  }
  return false;
}

/**
 * Refuses request data holding a keyword of the denylist at any depth, as Parse Server's
 * `checkProhibitedKeywords` does for every object write (after `beforeSave` triggers: advisory
 * GHSA-xprv-wvh7-qqqx) and for file metadata and tags, master key or not. Queries are not scanned
 * (Parse Server does not scan them either; they are never stored).
 * @throws ParseError 105 "Prohibited keyword in request data: {"key":"constructor"}."
 */
export function checkProhibitedKeywords(data: unknown): void {
  for (const keyword of DENYLIST) {
    if (containsKeyword(data, keyword)) throw new ParseError(ParseCode.INVALID_KEY_NAME, keyword.message);
  }
}

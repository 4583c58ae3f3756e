/**
 * Parse's `$regex` (Mongo/PCRE syntax) in JavaScript, and the word matching of `$text`. Pure functions,
 * shared by the compiler (to reject a bad pattern with 102 before any SQL runs) and by the SQL
 * functions of functions.ts.
 */

/** The `$options` Parse Server accepts (`/^[imxs]+$/`). */
export const REGEX_OPTIONS = /^[imxs]*$/;

const escapeLiteral = (text: string) => text.replace(/[^A-Za-z0-9]/g, (c) => `\\${c}`);

/**
 * Rewrites a PCRE-style pattern for JavaScript: `\Q...\E` quotes a literal (the Parse SDKs send
 * `startsWith`, `endsWith` and `contains` that way) and, with the `x` option, unescaped whitespace and
 * `#` comments outside character classes are dropped.
 */
export function translatePattern(pattern: string, extended: boolean): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        out += escapeLiteral(pattern.slice(i + 2, end < 0 ? pattern.length : end));
        i = end < 0 ? pattern.length : end + 2;
      } else if (next === 'E') {
        i += 2;
      } else {
        out += c + (next ?? '');
        i += 2;
      }
      continue;
    }
    i++;
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (extended && /\s/.test(c)) {
      // dropped
    } else if (extended && c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
    } else {
      out += c;
    }
  }
  return out;
}

/** A JavaScript RegExp for a Parse `$regex` and `$options`; throws SyntaxError for a bad pattern. */
export function toRegExp(pattern: string, options: string): RegExp {
  if (!REGEX_OPTIONS.test(options)) throw new SyntaxError(`Bad $options: ${options}`);
  const flags = [...new Set(options.replace('x', ''))].join('');
  return new RegExp(translatePattern(pattern, options.includes('x')), flags);
}

/** What a `$text` `$term` asks for: words, excluded words (`-word`) and quoted phrases. */
export interface TextSearch {
  words: string[];
  excluded: string[];
  phrases: string[];
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Case folding and, unless diacritic-sensitive, removal of combining marks ("é" → "e"). */
export const foldText = (text: string, caseSensitive: boolean, diacriticSensitive: boolean): string => {
  const plain = diacriticSensitive ? text : text.normalize('NFD').replace(/\p{M}/gu, '');
  return caseSensitive ? plain : plain.toLowerCase();
};

/** Parses a `$term` ("coffee -decaf \"dark roast\"") after folding it. */
export function parseTextSearch(term: string): TextSearch {
  const phrases: string[] = [];
  const rest = term.replace(/"([^"]*)"/g, (_, phrase: string) => {
    if (phrase.trim()) phrases.push(phrase);
    return ' ';
  });
  const words: string[] = [];
  const excluded: string[] = [];
  for (const chunk of rest.split(/\s+/)) {
    const list = chunk.startsWith('-') ? excluded : words;
    list.push(...(chunk.match(WORD) ?? []));
  }
  return { words, excluded, phrases };
}

/**
 * Whether `value` holds every word and phrase of `term` and none of its excluded words (whole words,
 * no stemming); an empty search matches nothing.
 */
export function textMatches(value: unknown, term: string, caseSensitive: boolean, diacriticSensitive: boolean): boolean {
  if (typeof value !== 'string') return false;
  const search = parseTextSearch(foldText(term, caseSensitive, diacriticSensitive));
  if (search.words.length === 0 && search.phrases.length === 0) return false;
  const text = foldText(value, caseSensitive, diacriticSensitive);
  const words = new Set(text.match(WORD) ?? []);
  return (
    search.words.every((w) => words.has(w)) && !search.excluded.some((w) => words.has(w)) && search.phrases.every((p) => text.includes(p))
  );
}

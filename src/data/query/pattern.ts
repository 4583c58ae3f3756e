/**
 * The word matching of `$text`. Pure functions, shared by the compilers of each dialect and by
 * SQLite's SQL functions (Parse's `$regex` is regexSyntax.ts's and regex.ts's).
 */

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

/**
 * An app's `fileUpload.fileExtensions` patterns, compiled for the linear-time engine. The owner of an
 * app chooses them and any client chooses the extension tested, so they run where a query's `$regex`
 * does (query/regex.ts), not in JavaScript's backtracking RegExp: one app's owner must not be able to
 * hold every app's requests.
 */
import { compileRegex, type LinearRegex } from './query/regex.js';

/** The index of the `]` closing the bracket expression opened at `open`, or the pattern's length. */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
  return i;
}

/** The index of the `)` closing the group opened at `open`, skipping escapes and brackets; -1 when none does. */
function groupEnd(pattern: string, open: number): number {
  let depth = 0;
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[') i = classEnd(pattern, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** Whether a `|` stands outside every group and bracket of `pattern`. */
function hasTopLevelBar(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '|') return true;
    if (c === '\\') i++;
    else if (c === '[') i = classEnd(pattern, i);
    else if (c === '(') {
      const end = groupEnd(pattern, i);
      if (end < 0) return false;
      i = end;
    }
  }
  return false;
}

/**
 * Compiles one `fileExtensions` pattern (a string, as Parse Server takes it, no flags). Besides the
 * `$regex` dialect it reads one form of lookahead, which Parse Server's own default uses
 * (`^(?!(html|svg|...)$)`, its Options/Definitions): `^(?!A)R` with no top-level `|` in `R` holds
 * for a text that `^(?:A)` does not match and `^(?:R)` does, two linear matches.
 * @throws RegexError (102) naming "fileExtensions pattern" and why it is refused.
 */
export function compileExtensionPattern(pattern: string): LinearRegex {
  const subject = 'fileExtensions pattern';
  if (pattern.startsWith('^(?!')) {
    const end = groupEnd(pattern, 1);
    const rest = end < 0 ? '' : pattern.slice(end + 1);
    if (end > 0 && !hasTopLevelBar(rest)) {
      const refused = compileRegex(`^(?:${pattern.slice(4, end)})`, '', subject);
      const required = compileRegex(`^(?:${rest})`, '', subject);
      return { test: (text) => !refused.test(text) && required.test(text) };
    }
  }
  return compileRegex(pattern, '', subject);
}

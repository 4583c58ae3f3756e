/**
 * Parse's `$regex` (JavaScript/PCRE syntax, as the SDKs send it) as a PostgreSQL advanced regular
 * expression (PostgreSQL docs, "POSIX Regular Expressions", 9.7.3). `\Q...\E` and the `x` option are
 * resolved by pattern.ts's translatePattern; the flags become embedded options: `i` as `i`, and
 * JavaScript's newline rules (`.` stops at a newline unless `s`; `^`/`$` match at line breaks only
 * with `m`) as PostgreSQL's `p`, `s`, `n` or `w`. Word boundaries `\b`/`\B` are written `\y`/`\Y`
 * there. What PostgreSQL's engine lacks (named groups, lookbehind before 9.6) fails in the database
 * and is answered 102 (adapter.ts).
 */
import { translatePattern } from '../../query/pattern.js';

/** PostgreSQL's newline-sensitivity option for JavaScript's `m` and `s` flags. */
function newlineOption(multiline: boolean, dotAll: boolean): string {
  if (multiline) return dotAll ? 'w' : 'n';
  return dotAll ? 's' : 'p';
}

/** Rewrites JavaScript escapes PostgreSQL spells otherwise (`\b` → `\y`, `\B` → `\Y`) outside classes. */
function rewriteEscapes(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      out += !inClass && next === 'b' ? '\\y' : !inClass && next === 'B' ? '\\Y' : c + next;
      i++;
    } else {
      if (c === '[' && !inClass) inClass = true;
      else if (c === ']' && inClass) inClass = false;
      out += c;
    }
  }
  return out;
}

/** The PostgreSQL pattern for a Parse `$regex` and `$options` (checked valid in JavaScript first). */
export function postgresRegex(pattern: string, flags: string): string {
  const body = rewriteEscapes(translatePattern(pattern, flags.includes('x')));
  const options = `${flags.includes('i') ? 'i' : ''}${newlineOption(flags.includes('m'), flags.includes('s'))}`;
  return `(?${options})${body}`;
}

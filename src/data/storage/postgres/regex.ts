/**
 * Parse's `$regex` as a PostgreSQL advanced regular expression (PostgreSQL docs, "POSIX Regular
 * Expressions", 9.7.3), in the dialect SQLite runs through RE2 too (query/regexSyntax.ts writes the
 * body: `\d`/`\w`/`\s` and `\b` as ASCII ranges and lookaround, `.` without `s` as `[^\n]`). The flags become
 * embedded options: `i` as `i`; `m` as `w` (`^`/`$` at line breaks) and otherwise `s`. Both keep
 * `[^x]` matching a newline, as RE2 and PCRE do (the newline-sensitive `n` and `p` would not).
 */
import { readPattern } from '../../query/regexSyntax.js';

/**
 * The PostgreSQL pattern for a Parse `$regex` and `$options`, checked by the query compiler first
 * (query/regex.ts's compileRegex).
 * @throws PatternSyntaxError for a pattern outside the dialect (the compiler has answered 102 before).
 */
export function postgresRegex(pattern: string, flags: string): string {
  const body = readPattern(pattern, flags).postgres;
  return `(?${flags.includes('i') ? 'i' : ''}${flags.includes('m') ? 'w' : 's'})${body}`;
}

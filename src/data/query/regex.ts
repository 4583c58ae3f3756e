/**
 * Client patterns compiled for a linear-time engine. Every regular expression a client or cloud code
 * chooses (`$regex` on SQLite, LiveQuery's matcher, an app's `fileUpload.fileExtensions`) runs in
 * re2js, a JavaScript port of RE2: matching takes time linear in the text, whatever the pattern, so
 * `^(a+)+$` cannot hold the event loop (JavaScript's RegExp backtracks: exponential time). The
 * dialect is regexSyntax.ts's, the one PostgreSQL runs too.
 */
import { RE2JS } from 're2js';
import { ParseCode, ParseError } from '../errors.js';
import { PatternSyntaxError, REGEX_OPTIONS, readPattern } from './regexSyntax.js';

/**
 * The largest compiled program accepted, in RE2 instructions (`programSize()`). Matching is linear in
 * the text, and when RE2's DFA gives up (counted repetitions such as `\w{255}` unanchored) each
 * character costs up to one step per instruction: measured, about 0.3 s per 10,000 characters at
 * 1000 instructions (and 1.4 s for a 4000-character `literal$`). 1000 still holds `^.{1,255}$` (512)
 * and a `startsWith`/`endsWith` of 997 characters; a plain literal (`contains`) is exempt: RE2
 * searches it as text.
 */
export const MAX_PROGRAM_SIZE = 1000;

/** The 102 for a pattern outside the dialect; `reason` says why without naming the subject. */
export class RegexError extends ParseError {
  constructor(
    subject: string,
    readonly reason: string,
  ) {
    super(ParseCode.INVALID_QUERY, `Invalid ${subject}: ${reason}`);
  }
}

/** A compiled pattern: `test` answers whether some part of `text` matches. */
export interface LinearRegex {
  test(text: string): boolean;
}

const CACHE_LIMIT = 500;

/** Compiled patterns and refusals by `options/pattern`, the least recently used forgotten first. */
const cache = new Map<string, LinearRegex | PatternSyntaxError>();

function remember(key: string, value: LinearRegex | PatternSyntaxError): void {
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

/** RE2's message without its prefix: "missing closing ): `(a`". */
const re2Reason = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, '');

function build(pattern: string, options: string): LinearRegex | PatternSyntaxError {
  try {
    const text = readPattern(pattern, options);
    const flags = (options.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (options.includes('m') ? RE2JS.MULTILINE : 0) | (options.includes('s') ? RE2JS.DOTALL : 0);
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(text.re2, flags);
    } catch (error) {
      return new PatternSyntaxError(re2Reason(error));
    }
    // A plain literal (the SDKs' `contains`) is searched as text, whatever its length.
    if (compiled.programSize() > MAX_PROGRAM_SIZE && !compiled.re2().prefixComplete) return new PatternSyntaxError(`it is too large to run (${compiled.programSize()} instructions; at most ${MAX_PROGRAM_SIZE})`);
    return compiled;
  } catch (error) {
    if (error instanceof PatternSyntaxError) return error;
    throw error;
  }
}

/**
 * Compiles a Parse `$regex` with its `$options` (i, m, s, x) for re2js, or returns it from a cache
 * of the last 500.
 * @param subject what the pattern is, for the error: `"$regex of name"`, `"query.where.name.$regex"`.
 * @throws RegexError, a ParseError 102 (INVALID_QUERY) "Invalid <subject>: <why>", for a pattern outside the
 *   dialect (regexSyntax.ts), one RE2 cannot parse, or one too large (MAX_PROGRAM_SIZE); never
 *   another error, whatever the input.
 */
export function compileRegex(pattern: string, options: string, subject = '$regex'): LinearRegex {
  // Checked before the cache key is made: options holding a `/` would make two keys one.
  if (!REGEX_OPTIONS.test(options)) throw new RegexError(subject, '$options may hold only i, m, s and x');
  const key = `${options}/${pattern}`;
  let entry = cache.get(key);
  if (entry === undefined) entry = build(pattern, options);
  else cache.delete(key);
  remember(key, entry);
  if (entry instanceof PatternSyntaxError) throw new RegexError(subject, entry.message);
  return entry;
}

/**
 * Whether `value` is a string some part of which matches the pattern (Parse's `$regex` semantics:
 * unanchored unless the pattern anchors).
 * @throws ParseError 102 as compileRegex, for a pattern the caller did not check.
 */
export function regexMatches(pattern: string, options: string, value: unknown): boolean {
  return typeof value === 'string' && compileRegex(pattern, options).test(value);
}

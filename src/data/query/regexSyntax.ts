/**
 * The dialect of Parse's `$regex` that Backyard accepts, the same on SQLite and PostgreSQL: what both
 * a linear-time engine (RE2, github.com/google/re2/wiki/Syntax) and PostgreSQL's advanced regular
 * expressions (PostgreSQL docs 9.7.3) run with the same meaning. One pass over a client's pattern
 * resolves what Parse's SDKs and `$options` add (`\Q...\E` quoting, the `x` option), refuses what
 * needs backtracking (backreferences, lookaround) or means something else in one engine, and writes
 * the pattern out twice: in RE2's syntax and in PostgreSQL's. Pure: no engine is called here
 * (regex.ts compiles the RE2 text; storage/postgres/regex.ts adds PostgreSQL's embedded options).
 */

/**
 * The `$options` Parse documents (i, m, s, x; Parse Server's DatabaseController also lets `u` through,
 * which Backyard refuses as before: every pattern here reads code points).
 */
export const REGEX_OPTIONS = /^[imxs]*$/;

/** The longest pattern accepted, in UTF-16 code units; the SDKs' `startsWith`/`contains` of a long text stay well below. */
export const MAX_PATTERN_LENGTH = 4096;

/**
 * The largest `{n,m}` count: PostgreSQL's RE_DUPMAX (its src/include/regex/regcustom.h); RE2 allows
 * 1000, so a larger count would run on one database and fail on the other.
 */
export const MAX_REPEAT = 255;

/** A pattern outside the dialect; `message` says why, for a 102 answer. */
export class PatternSyntaxError extends Error {}

/** One pattern written for each engine. */
export interface PatternText {
  /** For RE2 (re2js), flags given apart (regex.ts). */
  re2: string;
  /** For PostgreSQL's `~`, without the embedded options (postgres/regex.ts). */
  postgres: string;
}

const fail = (why: string): never => {
  throw new PatternSyntaxError(why);
};

/** ASCII punctuation: a backslash before it means the character itself in both engines. */
const isPunctuation = (c: string) => /^[!-/:-@[-`{-~]$/.test(c);

/** Character classes named `[:name:]` inside brackets that both engines know (RE2 adds `word` and `[:^name:]`). */
const POSIX_CLASSES = new Set(['alnum', 'alpha', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'xdigit']);

type Range = readonly [number, number];

/**
 * RE2's Perl classes (ASCII only, as in PCRE without UCP) as code point ranges. PostgreSQL's `\d`,
 * `\w` and `\s` follow the database's locale, so they are written out as these ranges there.
 */
const SHORTHANDS: Record<string, readonly Range[]> = {
  d: [[0x30, 0x39]],
  w: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  s: [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]],
};

const MAX_CODE_POINT = 0x10ffff;

/** The code points outside sorted, disjoint `ranges`. */
function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');

/** A code point as PostgreSQL escapes it (`\uXXXX`, `\UXXXXXXXX`: a fixed number of digits, unlike `\x`). */
const postgresCodePoint = (cp: number) => (cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`);

const postgresRanges = (ranges: readonly Range[]) =>
  ranges.map(([lo, hi]) => (lo === hi ? postgresCodePoint(lo) : `${postgresCodePoint(lo)}-${postgresCodePoint(hi)}`)).join('');

const ASCII_WORD = `[${postgresRanges(SHORTHANDS.w!)}]`;
/** RE2's `\b` and `\B` (ASCII word characters on either side) for PostgreSQL. */
const ASCII_BOUNDARY = `(?:(?<=${ASCII_WORD})(?!${ASCII_WORD})|(?<!${ASCII_WORD})(?=${ASCII_WORD}))`;
const ASCII_NOT_BOUNDARY = `(?:(?<=${ASCII_WORD})(?=${ASCII_WORD})|(?<!${ASCII_WORD})(?!${ASCII_WORD}))`;

const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;

/** One left-to-right pass writing both texts. */
class Translator {
  private i = 0;
  private inClass = false;
  private readonly re2: string[] = [];
  private readonly pg: string[] = [];

  constructor(
    private readonly source: string,
    private readonly extended: boolean,
    private readonly dotAll: boolean,
  ) {}

  run(): PatternText {
    while (this.i < this.source.length) {
      if (this.inClass) this.classToken();
      else this.token();
    }
    return { re2: this.re2.join(''), postgres: this.pg.join('') };
  }

  private emit(re2: string, pg = re2): void {
    this.re2.push(re2);
    this.pg.push(pg);
  }

  /** The character (code point) at `i`, refusing half of a surrogate pair: no engine can match one. */
  private char(at = this.i): string {
    const cp = this.source.codePointAt(at)!;
    if (isSurrogate(cp)) fail(`it holds a lone surrogate (U+${hex(cp, 4)}) at position ${at}`);
    return String.fromCodePoint(cp);
  }

  private token(): void {
    const c = this.char();
    if (c === '\\') return this.escape();
    if (c === '[') return this.openClass();
    if (c === '(') return this.group();
    if (c === '{') return this.bound();
    this.i += c.length;
    if (c === '}') this.emit('\\}');
    // PostgreSQL's `.` matches a newline unless newline-sensitive, and that mode would also keep
    // `[^x]` from matching one; so the mode stays off (postgres/regex.ts) and `.` says it here.
    else if (c === '.') this.emit('.', this.dotAll ? '.' : '[^\\n]');
    else if (this.extended && /\s/.test(c)) return;
    else if (this.extended && c === '#') {
      while (this.i < this.source.length && this.source[this.i] !== '\n') this.i++;
    } else this.emit(c);
  }

  private openClass(): void {
    this.i++;
    this.emit('[');
    if (this.source[this.i] === '^') {
      this.i++;
      this.emit('^');
    }
    // A `]` first is a member (RE2, PostgreSQL and PCRE; JavaScript reads `[]` as an empty class).
    if (this.source[this.i] === ']') {
      this.i++;
      this.emit('\\]');
    }
    this.inClass = true;
  }

  private classToken(): void {
    const c = this.char();
    if (c === '\\') return this.escape();
    if (c === ']') {
      this.i++;
      this.inClass = false;
      return this.emit(']');
    }
    if (c === '[') {
      const named = this.at(/\[:([A-Za-z^]*):\]/y);
      if (named) {
        if (!POSIX_CLASSES.has(named[1]!)) fail(`[:${named[1]}:] is not a known class; use one of ${[...POSIX_CLASSES].join(', ')}`);
        this.i += named[0].length;
        return this.emit(named[0]);
      }
      // `[.x.]` and `[=x=]` are collating elements to PostgreSQL and plain characters to RE2.
      this.i++;
      return this.emit('\\[');
    }
    this.i += c.length;
    this.emit(c);
  }

  /** `(`: a group; of the `(?` forms only `(?:` and named groups (names are dropped: nothing reads captures). */
  private group(): void {
    const rest = this.source.slice(this.i, this.i + 4);
    if (!rest.startsWith('(?')) {
      this.i++;
      return this.emit('(');
    }
    if (rest.startsWith('(?:')) {
      this.i += 3;
      return this.emit('(?:');
    }
    const named = this.at(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/y);
    if (named) {
      this.i += named[0].length;
      return this.emit('(');
    }
    if (rest.startsWith('(?=') || rest.startsWith('(?!')) fail('lookahead ((?= and (?!) is not supported: it needs a backtracking engine');
    if (rest.startsWith('(?<=') || rest.startsWith('(?<!')) fail('lookbehind ((?<= and (?<!) is not supported: it needs a backtracking engine');
    if (rest.startsWith('(?P=') || rest.startsWith('(?P>') || rest.startsWith('(?&') || this.at(/\(\?[+-]?\d/y)) fail('backreferences and recursion are not supported: they need a backtracking engine');
    if (rest.startsWith('(?>')) fail('atomic groups ((?>) are not supported');
    fail('inline options and other (? groups are not supported; pass options in $options');
  }

  /** `{`: a repetition `{n}`, `{n,}` or `{n,m}`, or else a literal brace (in both engines). */
  private bound(): void {
    const m = this.at(/\{(\d+)(,(\d*))?\}/y);
    if (!m) {
      this.i++;
      return this.emit('\\{');
    }
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
    if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) fail(`repetition counts above ${MAX_REPEAT} are not supported (${m[0]})`);
    if (max !== undefined && max < min) fail(`invalid repetition ${m[0]}: the maximum is below the minimum`);
    this.i += m[0].length;
    this.emit(m[0]);
  }

  private escape(): void {
    const at = this.i;
    if (at + 1 >= this.source.length) fail('it ends with a lone backslash');
    const n = this.char(at + 1);
    this.i += 1 + n.length;
    const inClass = this.inClass;
    switch (n) {
      case 'Q':
        return this.quoted();
      case 'E':
        return; // a `\E` with no `\Q` before it: PCRE ignores it
      case 'b':
      case 'B':
      case 'A':
      case 'z':
        if (inClass) fail(`\\${n} is not valid inside [...]`);
        // PostgreSQL's end of the text is \Z; its word boundary \y follows the locale's letters,
        // so RE2's ASCII one is written out with lookaround (linear there: no backreference).
        return this.emit(`\\${n}`, { b: ASCII_BOUNDARY, B: ASCII_NOT_BOUNDARY, A: '\\A', z: '\\Z' }[n]);
      case 'd':
      case 'w':
      case 's':
      case 'D':
      case 'W':
      case 'S': {
        const base = SHORTHANDS[n.toLowerCase()]!;
        const ranges = postgresRanges(n === n.toLowerCase() ? base : complement(base));
        return this.emit(`\\${n}`, inClass ? ranges : `[${ranges}]`);
      }
      case 'f':
      case 'n':
      case 'r':
      case 't':
      case 'v':
      case 'a':
        return this.emit(`\\${n}`);
      case '0':
        return this.codePoint(this.digits(/[0-7]{0,2}/y), 8, '\\0');
      case 'x': {
        const braced = this.at(/\{([0-9A-Fa-f]{1,6})\}/y);
        if (braced) {
          this.i += braced[0].length;
          return this.codePoint(braced[1]!, 16, '\\x');
        }
        const two = this.digits(/[0-9A-Fa-f]{2}/y);
        if (two === '') fail('\\x needs two hexadecimal digits or {hex}');
        return this.codePoint(two, 16, '\\x');
      }
      case 'u': {
        const four = this.digits(/[0-9A-Fa-f]{4}/y);
        if (four === '') fail('\\u needs four hexadecimal digits');
        let cp = parseInt(four, 16);
        // A UTF-16 pair written as two escapes (JavaScript's way to write an emoji) is one character.
        const low = this.at(/\\u(d[c-f][0-9a-f]{2})/iy);
        if (cp >= 0xd800 && cp <= 0xdbff && low) {
          this.i += 6;
          cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00);
        }
        return this.codePoint(cp.toString(16), 16, '\\u');
      }
      case 'p':
      case 'P':
        return fail('Unicode property classes (\\p{...}) are not supported');
      case 'k':
        return fail('backreferences (\\k<name>) are not supported: they need a backtracking engine');
      default:
        break;
    }
    if (/^[1-9]$/.test(n)) fail(`backreferences (\\${n}) are not supported: they need a backtracking engine`);
    if (/^[A-Za-z0-9]$/.test(n)) fail(`the escape \\${n} is not supported`);
    this.emit(isPunctuation(n) ? `\\${n}` : n);
  }

  /** What the sticky `re` matches at `i` (nothing consumed). */
  private at(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.i;
    return re.exec(this.source);
  }

  /** Consumes what the sticky `re` matches at `i`; '' when nothing. */
  private digits(re: RegExp): string {
    const m = this.at(re)?.[0] ?? '';
    this.i += m.length;
    return m;
  }

  private codePoint(digits: string, radix: number, form: string): void {
    const cp = digits === '' ? 0 : parseInt(digits, radix);
    if (cp > MAX_CODE_POINT) fail(`${form}{${digits}} is beyond Unicode`);
    if (isSurrogate(cp)) fail(`${form} names a lone surrogate (U+${hex(cp, 4)}), which no text holds`);
    this.emit(`\\x{${hex(cp, 1)}}`, postgresCodePoint(cp));
  }

  /** `\Q...\E` (or to the end): literal text, as the SDKs' `startsWith`, `endsWith` and `contains` send it. */
  private quoted(): void {
    const end = this.source.indexOf('\\E', this.i);
    const stop = end < 0 ? this.source.length : end;
    while (this.i < stop) {
      const c = this.char();
      this.i += c.length;
      this.emit(isPunctuation(c) ? `\\${c}` : c);
    }
    this.i = end < 0 ? stop : end + 2;
  }
}

/**
 * Reads a Parse `$regex` with its `$options` (i, m, s, x; Parse's docs "Queries" → "Regular
 * Expressions") into the texts each engine runs. `x` is applied here (unescaped whitespace and
 * `#` comments outside brackets dropped, as PCRE's extended mode); `s` decides how `.` is written for
 * PostgreSQL; `i` and `m` are left to the callers, as flags.
 * @throws PatternSyntaxError for options other than i, m, s and x, a pattern longer than
 *   MAX_PATTERN_LENGTH, backreferences, lookaround, atomic groups, inline options, `\p{...}`,
 *   counts above MAX_REPEAT, lone surrogates and escapes neither engine shares. Other syntax
 *   errors (an unclosed group) are RE2's to find (regex.ts).
 */
export function readPattern(pattern: string, options: string): PatternText {
  if (!REGEX_OPTIONS.test(options)) fail('$options may hold only i, m, s and x');
  if (pattern.length > MAX_PATTERN_LENGTH) fail(`it is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are accepted`);
  return new Translator(pattern, options.includes('x'), options.includes('s')).run();
}

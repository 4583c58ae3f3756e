import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../src/data/errors.js';
import { MAX_PROGRAM_SIZE, compileRegex, regexMatches } from '../src/data/query/regex.js';
import { MAX_PATTERN_LENGTH, readPattern } from '../src/data/query/regexSyntax.js';
import { postgresRegex } from '../src/data/storage/postgres/regex.js';
import { flags, safePattern as alternation, text } from './helpers/regexGrammar.js';

/** The 102 compileRegex throws for `pattern`, or undefined when it compiles. */
function refusal(pattern: string, options = ''): ParseError | undefined {
  try {
    compileRegex(pattern, options, '$regex of name');
    return undefined;
  } catch (error) {
    if (error instanceof ParseError) return error;
    throw error;
  }
}

describe('the linear-time engine agrees with JavaScript on the safe grammar', () => {
  it('whether a text matches, with every combination of i, m and s', () => {
    fc.assert(
      fc.property(alternation, flags, fc.array(text, { minLength: 1, maxLength: 6 }), (pattern, options, texts) => {
        const js = new RegExp(pattern, options);
        const linear = compileRegex(pattern, options);
        for (const t of texts) expect(linear.test(t), `/${pattern}/${options} on ${JSON.stringify(t)}`).toBe(js.test(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('x drops whitespace and comments outside brackets before matching', () => {
    fc.assert(
      fc.property(alternation, flags, text, (pattern, options, t) => {
        // Spaces and a comment around every piece; `[ ]` and `\ ` stay a space.
        const spaced = pattern.replace(/ /g, '[ ]').replace(/\|/g, ' | ') + ' # the end';
        expect(regexMatches(spaced, `${options}x`, t)).toBe(new RegExp(pattern, options).test(t));
      }),
      { numRuns: 500 },
    );
  });
});

describe('compileRegex refuses with 102 and nothing else', () => {
  const options = fc.oneof(flags, fc.string({ maxLength: 4 }));
  const check = (pattern: string, opts: string) => {
    let compiled;
    try {
      compiled = compileRegex(pattern, opts, '$regex of name');
    } catch (error) {
      expect(error).toBeInstanceOf(ParseError);
      expect((error as ParseError).code).toBe(102);
      expect((error as ParseError).message).toMatch(/^Invalid \$regex of name: ./);
      return;
    }
    // What compiles runs, and has a PostgreSQL text too.
    expect(typeof compiled.test('aé😀\n\ud800')).toBe('boolean');
    expect(postgresRegex(pattern, opts)).toMatch(/^\(\?i?[sw]\)/);
  };

  it('for arbitrary Unicode, lone surrogates included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), options, check), { numRuns: 3000 });
  });

  it('for arbitrary sequences of the syntax characters', () => {
    const syntax = fc.constantFrom(...'\\()[]{}|*+?.^$-:!=<>,PQEkbBdDwWsSxuc0123456789aé#\n '.split(''), '(?', '(?<', '\\Q', '\\E', '{2}', '{1,300}', '[:alpha:]', '\\x{41}', '\\u00e9');
    fc.assert(fc.property(fc.array(syntax, { maxLength: 30 }).map((parts) => parts.join('')), options, check), { numRuns: 3000 });
  });
});

describe('the dialect', () => {
  it('runs the classic catastrophic patterns in linear time, with the right answers', () => {
    const long = 'a'.repeat(10_000);
    expect(regexMatches('^(a+)+$', '', `${long}!`)).toBe(false);
    expect(regexMatches('^(a+)+$', '', long)).toBe(true);
    expect(regexMatches('(a|aa)+$', '', `${long}!`)).toBe(false);
    expect(regexMatches('(a*)*b', '', long)).toBe(false);
    expect(regexMatches('(a*)*b', '', `${long}b`)).toBe(true);
    expect(regexMatches('(.*a){20}', '', `${'a'.repeat(19)}${'b'.repeat(10_000)}`)).toBe(false);
    expect(regexMatches('(.*a){20}', '', `${'ab'.repeat(20)}`)).toBe(true);
  });

  it.each([
    ['(a)\\1', 'backreferences (\\1) are not supported: they need a backtracking engine'],
    ['(?<n>a)\\k<n>', 'backreferences (\\k<name>) are not supported: they need a backtracking engine'],
    ['(?P<n>a)(?P=n)', 'backreferences and recursion are not supported: they need a backtracking engine'],
    ['a(?=b)', 'lookahead ((?= and (?!) is not supported: it needs a backtracking engine'],
    ['a(?!b)', 'lookahead ((?= and (?!) is not supported: it needs a backtracking engine'],
    ['(?<=a)b', 'lookbehind ((?<= and (?<!) is not supported: it needs a backtracking engine'],
    ['(?<!a)b', 'lookbehind ((?<= and (?<!) is not supported: it needs a backtracking engine'],
    ['(?>a+)b', 'atomic groups ((?>) are not supported'],
    ['(?i)abc', 'inline options and other (? groups are not supported; pass options in $options'],
    ['\\p{L}', 'Unicode property classes (\\p{...}) are not supported'],
    ['a{256}', 'repetition counts above 255 are not supported ({256})'],
    ['a{3,2}', 'invalid repetition {3,2}: the maximum is below the minimum'],
    ['[[:word:]]', '[:word:] is not a known class; use one of alnum, alpha, blank, cntrl, digit, graph, lower, print, punct, space, upper, xdigit'],
    ['\\y', 'the escape \\y is not supported'],
    ['[\\b]', '\\b is not valid inside [...]'],
    ['\\x4', '\\x needs two hexadecimal digits or {hex}'],
    ['\\ud800', '\\u names a lone surrogate (U+D800), which no text holds'],
    ['a\ud800', 'it holds a lone surrogate (U+D800) at position 1'],
    ['abc\\', 'it ends with a lone backslash'],
    ['(ab', 'missing closing ): `(ab`'],
    ['a**', 'invalid nested repetition operator: `**`'],
  ])('refuses %j', (pattern, why) => {
    expect(refusal(pattern)).toMatchObject({ code: 102, message: `Invalid $regex of name: ${why}` });
  });

  it('bounds the pattern (characters) and its program (RE2 instructions)', () => {
    const long = 'a'.repeat(MAX_PATTERN_LENGTH + 1);
    expect(refusal(long)?.message).toBe(`Invalid $regex of name: it is ${MAX_PATTERN_LENGTH + 1} characters long; at most ${MAX_PATTERN_LENGTH} are accepted`);
    expect(refusal(long.slice(1))).toBeUndefined();
    expect(refusal('(?:\\w{255}){3}x{255}')?.message).toMatch(new RegExp(`^Invalid \\$regex of name: it is too large to run \\(\\d+ instructions; at most ${MAX_PROGRAM_SIZE}\\)$`));
    expect(refusal('^.{1,255}$')).toBeUndefined();
    expect(refusal(`^\\Q${'x'.repeat(990)}\\E`)).toBeUndefined();
    expect(refusal(`^\\Q${'x'.repeat(1000)}\\E`)?.message).toMatch(/too large to run/);
  });

  it('refuses options other than i, m, s and x', () => {
    expect(refusal('a', 'g')).toMatchObject({ code: 102, message: 'Invalid $regex of name: $options may hold only i, m, s and x' });
    expect(refusal('a', 'i/')).toMatchObject({ code: 102 });
  });

  it('reads the SDKs\u2019 \\Q...\\E quoting, the x option and Parse\u2019s escapes', async () => {
    const { default: Parse } = await import('parse/node');
    // What the JS SDK sends for startsWith, endsWith and contains, `\E` inside the text included.
    for (const literal of ['a.c', 'x\\Ey', '(*)', 'é [ ] \\', ' #x ']) {
      const where = new Parse.Query('T').startsWith('k', literal).toJSON().where.k as { $regex: string };
      expect(regexMatches(where.$regex, '', `${literal}!`), where.$regex).toBe(true);
      expect(regexMatches(where.$regex, 'x', `${literal}!`), where.$regex).toBe(true);
      expect(regexMatches(where.$regex, '', `!${literal}`), where.$regex).toBe(false);
      const contains = new Parse.Query('T').contains('k', literal).toJSON().where.k as { $regex: string };
      expect(regexMatches(contains.$regex, '', `--${literal}--`)).toBe(true);
      expect(regexMatches(contains.$regex, '', literal.slice(1))).toBe(false);
    }
    expect(regexMatches('^ a l  # letters\n i', 'x', 'ali')).toBe(true);
    expect(regexMatches('^a\\ l', 'x', 'a l')).toBe(true);
    expect(regexMatches('^\\x41\\u00e9\\x{1F600}\\0?$', '', 'Aé😀')).toBe(true);
    expect(regexMatches('^\\uD83D\\uDE00$', '', '😀')).toBe(true);
    // One character is one code point, as in PCRE and PostgreSQL (JavaScript without `u` sees two).
    expect(regexMatches('^.$', '', '😀')).toBe(true);
    expect(regexMatches('^(?<year>\\d{4})-(?P<month>\\d\\d)$', '', '2024-05')).toBe(true);
    expect(regexMatches(`^(?<${'n'.repeat(60)}>a)$`, '', 'a')).toBe(true);
    expect(regexMatches('^[]a]+$', '', 'a]')).toBe(true);
    expect(regexMatches('a{,2}', '', 'a{,2}')).toBe(true);
    expect(regexMatches('^[[:alpha:]]+$', '', 'abc')).toBe(true);
    expect(regexMatches('ALVARO', 'i', 'álvaro')).toBe(false);
    expect(regexMatches('ÁLVARO', 'i', 'álvaro')).toBe(true);
    expect(regexMatches('b$', 'm', 'ab\nc')).toBe(true);
    expect(regexMatches('b$', '', 'ab\nc')).toBe(false);
    expect(regexMatches('a.c', '', 'a\nc')).toBe(false);
    expect(regexMatches('a.c', 's', 'a\nc')).toBe(true);
    expect(regexMatches('a', '', 5)).toBe(false);
  });

  it('writes PostgreSQL what it means in RE2', () => {
    expect(readPattern('\\d.\\A\\z', '')).toEqual({ re2: '\\d.\\A\\z', postgres: '[\\u0030-\\u0039][^\\n]\\A\\Z' });
    const word = '[\\u0030-\\u0039\\u0041-\\u005A\\u005F\\u0061-\\u007A]';
    expect(readPattern('\\b', '').postgres).toBe(`(?:(?<=${word})(?!${word})|(?<!${word})(?=${word}))`);
    expect(readPattern('\\B', '').postgres).toBe(`(?:(?<=${word})(?=${word})|(?<!${word})(?!${word}))`);
    expect(readPattern('[\\w-]', 's').postgres).toBe('[\\u0030-\\u0039\\u0041-\\u005A\\u005F\\u0061-\\u007A-]');
    expect(readPattern('\\S', '').postgres).toBe('[\\u0000-\\u0008\\u000B\\u000E-\\u001F\\u0021-\\U0010FFFF]');
    expect(readPattern('\\x41{2}}[[.a.]]', '')).toEqual({ re2: '\\x{41}{2}\\}[\\[.a.]]', postgres: '\\u0041{2}\\}[\\[.a.]]' });
    expect(postgresRegex('a.b', 'im')).toBe('(?iw)a[^\\n]b');
    expect(postgresRegex('a.b', 's')).toBe('(?s)a.b');
  });
});

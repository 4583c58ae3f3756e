/**
 * fast-check arbitraries of `$regex` patterns from a grammar that JavaScript's RegExp, RE2 and
 * PostgreSQL read alike: literals, escaped punctuation, classes, `.`, `\d \w \s` and their
 * negations, quantifiers (greedy and lazy, counted), alternation, anchors, word boundaries and
 * groups; and texts to match them against. The alphabet leaves out what JavaScript reads otherwise
 * on purpose (`\r` and U+2028 end a line for JavaScript's `.` and `$`, not for RE2, PCRE or
 * PostgreSQL).
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { MAX_PROGRAM_SIZE } from '../../src/data/query/regex.js';

/** The characters of the texts matched. */
export const ALPHABET = ['a', 'b', 'A', 'B', 'é', 'É', '1', ' ', '-', '_', '\n', '.'];
const atom = fc.oneof(
  fc.constantFrom('a', 'b', 'A', 'é', 'É', '1', ' ', '-', '_'),
  fc.constantFrom('\\.', '\\-', '\\*', '\\n'),
  fc.constantFrom('[ab]', '[^a]', '[a-c]', '[é1]', '[^\\n]', '[\\d_]', '[-a]', '[.]'),
  fc.constantFrom('.', '\\d', '\\w', '\\s', '\\D', '\\W', '\\S'),
);
const quantifier = fc.constantFrom('', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,}', '{2,}?');
const { alternation } = fc.letrec<{ alternation: string; sequence: string; piece: string }>((tie) => ({
  piece: fc.oneof(
    { weight: 4, arbitrary: fc.tuple(atom, quantifier).map(([a, q]) => a + q) },
    { weight: 1, arbitrary: fc.constantFrom('^', '$', '\\b', '\\B') },
    // A group takes a quantifier only when nothing inside it has one: nested quantifiers (`((a*)+)*`)
    // backtrack exponentially in JavaScript's RegExp, the oracle, and held a CI run for four minutes.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('(', '(?:'), tie('alternation'), quantifier)
        .map(([open, inner, q]) => `${open}${inner})${/[*+?}]/.test(inner) ? '' : q}`),
    },
  ),
  sequence: fc.array(tie('piece'), { maxLength: 4 }).map((pieces) => pieces.join('')),
  alternation: fc.array(tie('sequence'), { minLength: 1, maxLength: 3 }).map((branches) => branches.join('|')),
}));
/** A pattern of the grammar, within the size compileRegex accepts (nested counts multiply). */
export const safePattern = alternation.filter((pattern) => RE2JS.compile(pattern).programSize() <= MAX_PROGRAM_SIZE);

/** Texts of up to 12 characters of ALPHABET. */
export const text = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 12 }).map((chars) => chars.join(''));
/** A subset of Parse's i, m and s options. */
export const flags = fc.subarray(['i', 'm', 's']).map((f) => f.join(''));


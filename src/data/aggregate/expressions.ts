/**
 * Aggregation expressions (MongoDB's manual, "Expressions"), compiled once per stage into functions
 * of a document so that no stage re-reads its spec for every object: `"$field.path"`, `{$literal: v}`,
 * arrays and objects of expressions, constants, and the operators of arithmetic.ts and dates.ts.
 */
import { ARITHMETIC_OPERATORS, compileArithmetic } from './arithmetic.js';
import { compileDatePart, DATE_PART_OPERATORS } from './dates.js';
import { getPath, invalid, isPlainObject, PATH, pathParts, type Doc } from './values.js';

/** A compiled expression: its value for one document (undefined when a field is missing). */
export type Evaluate = (doc: Doc) => unknown;

/** The field path of a `"$field"` reference. @throws ParseError 102 for `$$variables` and bad names. */
export function fieldPath(ref: string, where: string): string {
  if (ref.startsWith('$$') || !PATH.test(ref.slice(1))) throw invalid(`${where}: ${JSON.stringify(ref)} is not a field reference such as "$score" or "$address.city".`);
  return ref.slice(1);
}

/**
 * Compiles an expression. `where` names the stage field in messages (`$project.total`).
 * @throws ParseError 102 for an unknown operator, a malformed operand or a bad field reference; the
 *   returned function throws 102 for an operand of the wrong type (a string to `$multiply`).
 */
export function compileExpression(expr: unknown, where: string): Evaluate {
  if (typeof expr === 'string' && expr.startsWith('$')) {
    const parts = pathParts(fieldPath(expr, where));
    return (doc) => getPath(doc, parts);
  }
  if (Array.isArray(expr)) {
    const items = expr.map((e) => compileExpression(e, where));
    return (doc) => items.map((item) => item(doc) ?? null);
  }
  if (isPlainObject(expr)) {
    const keys = Object.keys(expr);
    const op = keys.find((k) => k.startsWith('$'));
    if (op !== undefined) {
      if (keys.length !== 1) throw invalid(`${where}: an expression object with an operator takes only that operator, not ${keys.join(', ')}.`);
      return compileOperator(op, expr[op], where);
    }
    const fields = keys.map((k) => {
      if (!/^[A-Za-z0-9_]+$/.test(k)) throw invalid(`${where}: ${k} is not a field name.`);
      return [k, compileExpression(expr[k], `${where}.${k}`)] as const;
    });
    return (doc) => {
      const out: Doc = {};
      for (const [k, e] of fields) {
        const v = e(doc);
        if (v !== undefined) out[k] = v;
      }
      return out;
    };
  }
  return () => expr;
}

function compileOperator(op: string, arg: unknown, where: string): Evaluate {
  if (op === '$literal') return () => arg;
  const compiled = compileArithmetic(op, arg, where, compileExpression) ?? compileDatePart(op, arg, where, compileExpression);
  if (compiled) return compiled;
  throw invalid(`${where}: expression operator ${op} is not supported; use field references ("$field"), $literal, ${[...ARITHMETIC_OPERATORS, ...DATE_PART_OPERATORS].join(', ')}.`);
}

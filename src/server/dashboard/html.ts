/**
 * Safe HTML for the dashboard's server-rendered pages: the `html` template tag escapes every value
 * it is given unless the value is already `Html` (made by this tag or by `raw`), so text from apps,
 * objects, file contents and callers can never become markup.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and attribute values (quoted with either quote). */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** A piece of markup that is already safe. Only `html` and `raw` make one. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** A value that `html` accepts: markup, text (escaped), numbers, lists of those; nullish and false render nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

/** The template tag of every page: `html\`<p>${text}</p>\`` escapes `text`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Marks trusted markup (constants of this module's callers, never caller input) as safe. */
export const raw = (markup: string): Html => new Html(markup);

/** Joins pieces of markup. */
export const join = (parts: readonly HtmlValue[], separator = ''): Html => new Html(parts.map((p) => render(p)).join(render(separator)));

/** A `name="value"` pair for an attribute that may be absent (`attr('selected', on)`). */
export const attr = (name: string, on: boolean): Html => new Html(on ? ` ${name}` : '');

/** A URL built from a path template and parts that are each percent-encoded. */
export function path(strings: TemplateStringsArray, ...parts: string[]): string {
  let out = strings[0]!;
  parts.forEach((part, i) => {
    out += encodeURIComponent(part) + strings[i + 1]!;
  });
  return out;
}

/** A query string (`?a=1&b=2`) from the defined entries of `params`, or '' when there are none. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Formats a count with thousands separators (`1,000`). */
export const count = (n: number): string => n.toLocaleString('en-US');

/** A count with its noun: `1 object`, `2 objects`. */
export const plural = (n: number, word: string, plural = `${word}s`): string => `${count(n)} ${n === 1 ? word : plural}`;

/** A date and time for people: `2026-11-21 09:30 UTC` ('' for none). */
export const when = (iso: string | null | undefined): string => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '');

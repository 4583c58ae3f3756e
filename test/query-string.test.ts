import fc from 'fast-check';
import { parse as parseFlat } from 'fast-querystring';
import { describe, expect, it } from 'vitest';
import { polygonForms } from '../src/data/query/values.js';
import { parseQueryString } from '../src/data/rest/queryString.js';

describe('parseQueryString (rest/queryString.ts)', () => {
  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/);
  const value = fc.string({ maxLength: 20 });

  it('reads a string without bracketed keys as the flat parser does, whatever its values hold', () => {
    fc.assert(
      fc.property(fc.dictionary(name, value, { maxKeys: 6 }), (params) => {
        const text = Object.entries(params)
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
          .join('&');
        expect(parseQueryString(text)).toEqual({ ...(parseFlat(text) as Record<string, unknown>) });
        expect(parseQueryString(text)).toEqual(params);
      }),
    );
  });

  it('nests bracketed keys, typed or percent-encoded, as Parse Server\'s Express does', () => {
    fc.assert(
      fc.property(name, name, value, fc.boolean(), (field, op, v, encoded) => {
        const open = encoded ? '%5B' : '[';
        const close = encoded ? '%5D' : ']';
        const text = `where${open}${field}${close}${open}$${op}${close}=${encodeURIComponent(v)}&limit=5`;
        expect(parseQueryString(text)).toEqual({ where: { [field]: { [`$${op}`]: v } }, limit: '5' });
      }),
    );
  });

  it('keeps prototype keys out of the objects it builds', () => {
    const parsed = parseQueryString('where[__proto__][polluted]=1&where[a]=2');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parsed).toEqual({ where: { a: '2' } });
  });
});

describe('polygonForms (query/values.ts)', () => {
  const vertex = fc.tuple(fc.integer({ min: -90, max: 90 }), fc.integer({ min: -180, max: 180 }));
  const ring = fc.uniqueArray(vertex, { minLength: 3, maxLength: 12, selector: ([a, b]) => `${a},${b}` });
  const forms = (coordinates: unknown) => new Set(polygonForms({ __type: 'Polygon', coordinates })!.map((l) => (l as { json: string }).json));

  it('gives the same forms for a ring from any vertex, in either direction, open or closed', () => {
    fc.assert(
      fc.property(ring, fc.nat(), fc.boolean(), fc.boolean(), (r, shift, reverse, close) => {
        const i = shift % r.length;
        let other = [...r.slice(i), ...r.slice(0, i)];
        if (reverse) other.reverse();
        if (close) other = [...other, other[0]!];
        expect(forms(other)).toEqual(forms(r));
        // The stored form (closed as given) is among them.
        expect(forms(r).has(JSON.stringify({ __type: 'Polygon', coordinates: [...r, r[0]] }))).toBe(true);
      }),
    );
  });

  it('leaves values that are no ring of number pairs to be compared as given', () => {
    expect(polygonForms({ __type: 'Polygon', coordinates: [[0, 0], [1, 1]] })).toBeUndefined();
    expect(polygonForms({ __type: 'Polygon', coordinates: 'x' })).toBeUndefined();
    expect(polygonForms({ __type: 'GeoPoint', latitude: 1, longitude: 2 })).toBeUndefined();
  });
});

import type { DiffCase } from '../harness.js';

/** Differential cases: query-where (issue 13). */
export const cases: DiffCase[] = [];

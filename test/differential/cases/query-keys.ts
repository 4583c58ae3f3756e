import type { DiffCase } from '../harness.js';

/** Differential cases: query-keys (issue 13). */
export const cases: DiffCase[] = [];

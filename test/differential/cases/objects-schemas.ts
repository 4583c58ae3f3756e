import type { DiffCase } from '../harness.js';

/** Differential cases: objects-schemas (issue 13). */
export const cases: DiffCase[] = [];

import type { DiffCase } from '../harness.js';

/** Differential cases: aggregate (issue 13). */
export const cases: DiffCase[] = [];

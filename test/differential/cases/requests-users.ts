import type { DiffCase } from '../harness.js';

/** Differential cases: requests-users (issue 13). */
export const cases: DiffCase[] = [];

import { expect } from 'vitest';
import { ManagementError } from '../../src/errors.js';

/** Calls `f`, which must throw a ManagementError; returns it (to check its kind and text). */
export function refusalOf(f: () => unknown): ManagementError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ManagementError);
    return error as ManagementError;
  }
  throw new Error('expected a refusal');
}

/** Awaits `f`, which must reject with a ManagementError; returns it (to check its kind and text). */
export async function rejectionOf(f: () => Promise<unknown>): Promise<ManagementError> {
  try {
    await f();
  } catch (error) {
    expect(error).toBeInstanceOf(ManagementError);
    return error as ManagementError;
  }
  throw new Error('expected a refusal');
}

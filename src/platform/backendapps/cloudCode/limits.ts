/**
 * Limits of a Backend App's cloud code tree. They keep one deploy, one listing and
 * one worker's code small enough to read, send and load at once.
 */

/** Largest size of one file after a deploy: 1 MiB, counted in bytes (UTF-8). */
export const MAX_FILE_BYTES = 1024 * 1024;

/** Largest size of the whole tree (`cloud/` and `public/` together) after a deploy: 20 MiB. */
export const MAX_TREE_BYTES = 20 * 1024 * 1024;

/** Most changes accepted in one `deployCloudCode` call. */
export const MAX_CHANGES = 200;

/** Longest accepted path, in characters, and longest segment, in bytes (the file system's name limit). */
export const MAX_PATH_CHARS = 1024;
export const MAX_SEGMENT_BYTES = 255;

/** `1048576` → `1 MiB`; used in messages that name a limit. */
export const formatLimit = (bytes: number): string =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;

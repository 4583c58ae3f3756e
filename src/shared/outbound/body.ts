/**
 * A body that passes `source` on until it has given `maxBytes`, then fails with what
 * `describe('too-large')` makes; a failure of `source` (an abort, a dropped connection) fails it
 * with what `describe(error)` makes of that error.
 */
export function boundedBody(source: ReadableStream<Uint8Array>, maxBytes: number, describe: (error: unknown) => unknown): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        controller.error(describe(error));
        return;
      }
      if (chunk.done) return controller.close();
      size += chunk.value.byteLength;
      if (size > maxBytes) {
        controller.error(describe('too-large'));
        await reader.cancel().catch(() => undefined);
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

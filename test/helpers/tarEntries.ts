import tar from 'tar-stream';

/** The headers of every entry of a tar stream, by name (their contents are read and dropped). */
export async function tarEntries(stream: { pipe(destination: tar.Extract): unknown }): Promise<Map<string, tar.Header>> {
  const entries = new Map<string, tar.Header>();
  const extract = tar.extract();
  extract.on('entry', (header, body, next) => {
    entries.set(header.name, header);
    body.resume();
    body.on('end', next);
  });
  await new Promise((resolve, reject) => {
    extract.on('finish', () => resolve(undefined));
    extract.on('error', reject);
    stream.pipe(extract);
  });
  return entries;
}

import fs from 'node:fs';
import path from 'node:path';

/**
 * The Debian (or Ubuntu) mirror that apt already uses on this machine, for debootstrap
 * (docs/notes/docker.md: "read the mirror from /etc/apt/sources.list.d/ rather than writing it into
 * code"). Reads `*.sources` (deb822) and `*.list` (one-line) files; other names, such as
 * `foo.list.disabled`, are ignored as apt ignores them.
 */
export interface AptMirror {
  /** `http://deb.debian.org/debian` */
  uri: string;
  /** The release, e.g. `bookworm`: the entry's first suite without a `-updates`/`-security` part. */
  suite: string;
  /** The entry's `Signed-By` keyring file, when it names one. */
  keyring?: string;
}

/** Where apt keeps its sources. */
export const APT_SOURCES = { list: '/etc/apt/sources.list', folder: '/etc/apt/sources.list.d' } as const;

/**
 * The first usable mirror in `files` (name → content, in apt's order): a `deb` entry over http(s)
 * whose suite has no `-` (a release, not `-updates` or `-security`).
 * @returns undefined when no entry qualifies.
 */
export function mirrorFromSources(files: ReadonlyArray<{ name: string; content: string }>): AptMirror | undefined {
  for (const { name, content } of files) {
    const entries = name.endsWith('.sources') ? deb822Entries(content) : oneLineEntries(content);
    for (const entry of entries) {
      if (!entry.types.includes('deb')) continue;
      const uri = entry.uris.find((u) => /^https?:\/\//.test(u));
      const suite = entry.suites.find((s) => /^[a-z]+$/.test(s));
      if (uri && suite) return { uri: uri.replace(/\/+$/, ''), suite, ...(entry.keyring ? { keyring: entry.keyring } : {}) };
    }
  }
  return undefined;
}

/**
 * The mirror apt uses here, read from `/etc/apt/sources.list` and `/etc/apt/sources.list.d/`.
 * @returns undefined on a machine without apt sources (not Debian or Ubuntu).
 */
export function hostAptMirror(sources: { list: string; folder: string } = APT_SOURCES): AptMirror | undefined {
  const files: Array<{ name: string; content: string }> = [];
  const read = (file: string) => {
    try {
      files.push({ name: path.basename(file), content: fs.readFileSync(file, 'utf8') });
    } catch {
      // missing or unreadable: apt would skip it too
    }
  };
  read(sources.list);
  let names: string[] = [];
  try {
    names = fs.readdirSync(sources.folder).filter((n) => n.endsWith('.list') || n.endsWith('.sources')).sort();
  } catch {
    // no folder
  }
  for (const n of names) read(path.join(sources.folder, n));
  return mirrorFromSources(files);
}

interface Entry {
  types: string[];
  uris: string[];
  suites: string[];
  keyring?: string;
}

/** Stanzas of a deb822 `.sources` file (blank-line separated `Key: value` fields, `#` comments). */
function deb822Entries(content: string): Entry[] {
  return content
    .split(/\n\s*\n/)
    .map((stanza) => {
      const fields = new Map<string, string>();
      for (const line of stanza.split('\n')) {
        const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
        if (m) fields.set(m[1]!.toLowerCase(), m[2]!.trim());
      }
      const words = (key: string) => (fields.get(key) ?? '').split(/\s+/).filter(Boolean);
      if (fields.get('enabled')?.toLowerCase() === 'no') return undefined;
      const keyring = fields.get('signed-by');
      return { types: words('types'), uris: words('uris'), suites: words('suites'), ...(keyring?.startsWith('/') ? { keyring } : {}) };
    })
    .filter((e): e is Entry => e !== undefined);
}

/** Lines of a one-line `.list` file: `deb [options] uri suite component...`. */
function oneLineEntries(content: string): Entry[] {
  return content.split('\n').flatMap((raw) => {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (!m) return [];
    const keyring = /signed-by=(\S+)/.exec(m[2] ?? '')?.[1];
    return [{ types: [m[1]!], uris: [m[3]!], suites: [m[4]!], ...(keyring?.startsWith('/') ? { keyring } : {}) }];
  });
}

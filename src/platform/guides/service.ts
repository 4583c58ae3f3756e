import fs from 'node:fs';
import path from 'node:path';
import type { GuideOperations } from '../services.js';

/** A guide: a markdown file under `guides/`, its title being the file name without `.md`. */
export interface Guide {
  title: string;
  /** The first `# ` heading. */
  heading: string;
  /** The first paragraph after the heading: what need the guide meets. */
  summary: string;
  content: string;
}

/** Tool names a guide calls: each step that calls a tool starts with "Call `toolName`". */
export const toolsCalledIn = (content: string): string[] => [
  ...new Set([...content.matchAll(/Call `([A-Za-z]+)`/g)].map((m) => m[1]!)),
];

/**
 * Reads the guides once, at start: the tool input schema of getGuide enumerates
 * the titles found then.
 */
export class GuideService implements GuideOperations {
  private readonly guides: ReadonlyMap<string, Guide>;

  constructor(folder: string) {
    const entries = fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.endsWith('.md')).sort() : [];
    this.guides = new Map(
      entries.map((file) => {
        const title = file.slice(0, -'.md'.length);
        const content = fs.readFileSync(path.join(folder, file), 'utf8');
        return [title, parseGuide(title, content)] as const;
      }),
    );
  }

  /** Titles in alphabetical order. */
  titles(): string[] {
    return [...this.guides.keys()];
  }

  get(title: string): Guide | undefined {
    return this.guides.get(title);
  }

  all(): Guide[] {
    return [...this.guides.values()];
  }
}

function parseGuide(title: string, content: string): Guide {
  const lines = content.split('\n');
  const headingIndex = lines.findIndex((l) => l.startsWith('# '));
  const heading = headingIndex >= 0 ? lines[headingIndex]!.slice(2).trim() : title;
  const rest = lines.slice(headingIndex + 1);
  const start = rest.findIndex((l) => l.trim() !== '');
  const paragraph: string[] = [];
  for (const line of rest.slice(Math.max(start, 0))) {
    if (line.trim() === '' || line.startsWith('#')) break;
    paragraph.push(line.trim());
  }
  return { title, heading, summary: paragraph.join(' '), content };
}

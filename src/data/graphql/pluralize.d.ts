/** The one function of `pluralize` (https://github.com/plurals/pluralize) Backyard calls, as Parse Server names its find queries with it. */
declare module 'pluralize' {
  /** The plural of `word` (`gameScore` → `gameScores`, `person` → `people`). */
  export default function pluralize(word: string, count?: number, inclusive?: boolean): string;
}

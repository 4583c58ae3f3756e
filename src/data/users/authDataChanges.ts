/** What a write asks of each provider: its data to link, or null to unlink it. */
export type AuthDataChanges = Record<string, Record<string, unknown> | null>;

/** What became of one notification to one device. */
export type Delivery = { ok: true } | { ok: false; error: string };

import type { DataStore } from '../store.js';

/** Roles nested deeper than this are ignored (a cycle cannot loop forever). */
const MAX_DEPTH = 20;

/**
 * The names of every role a user has (Parse docs, "Roles"): roles whose `users` relation holds the
 * user, and, transitively, roles whose `roles` relation holds one of those (a child role's users
 * get its parents' permissions).
 * @returns role principals as `role:<name>`.
 */
export async function rolePrincipals(store: DataStore, userId: string): Promise<string[]> {
  if (!store.schema.has('_Role')) return [];
  let frontier = await store.owningIds('_Role', 'users', [userId]);
  const seen = new Set<string>();
  for (let depth = 0; frontier.length && depth < MAX_DEPTH; depth++) {
    frontier = frontier.filter((id) => !seen.has(id));
    frontier.forEach((id) => seen.add(id));
    frontier = await store.owningIds('_Role', 'roles', frontier);
  }
  if (seen.size === 0) return [];
  const rows = await store.rows('_Role', { where: { objectId: { $in: [...seen] } }, limit: seen.size });
  return rows.flatMap((r) => (typeof r.data.name === 'string' ? [`role:${r.data.name}`] : []));
}

import { clientAuth, sessionOwnerAuth } from './auth/sessions.js';
import { distinctValues, runPipeline } from './aggregate/run.js';
import { checkingFace, type DataEngine } from './engine.js';
import { prepareInstallationWrite } from './push/installations.js';
import { sendPush } from './push/service.js';
import { createClass, dropClass, updateClass } from './schemaChanges.js';
import type { StoredRow } from './storage/adapter.js';
import type { DataStore } from './store.js';
import { requestPasswordReset, requestVerificationEmail, sendVerificationMail, userOfResetToken, verifyEmail, type MailContext } from './users/emails.js';
import { authenticate, createSession, deleteUser, logIn, logInAs, logInWithAuthData, logOut, me, resetPassword, sessionByToken, signUp, updateUser } from './users/service.js';

/** A service function of the master view, as its callers see it: the store already given. */
type WithoutStore<F> = F extends (store: DataStore, ...args: infer A) => infer R ? (...args: A) => R : never;

/** `fns`, each called with `store` in front of its own arguments. */
function over<T extends Record<string, (store: DataStore, ...args: never[]) => unknown>>(store: DataStore, fns: T): { readonly [K in keyof T]: WithoutStore<T[K]> } {
  const bound: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(fns)) bound[name] = (...args: never[]) => fn(store, ...args);
  return bound as { readonly [K in keyof T]: WithoutStore<T[K]> };
}

/**
 * One Backend App's services, as the data API's routes (rest/routes) get them next to the checking
 * face: each holds the app's master view (store.ts) in a private field and does one job with it
 * (a signup, a session, a role's name, `/config`, a schema change, an aggregation, a push), the way
 * Parse Server's `UsersRouter`, `SessionsRouter` and `SchemasRouter` reach its `DatabaseController`
 * while a plain object call goes through `RestQuery` and `RestWrite`. A route holds no store, so the
 * master view is out of its reach at compile time; what it may do unchecked is named here.
 */
export class AppServices {
  readonly #store: DataStore;
  /** The checking face over the same store (and, inside `atomically`, the same transaction). */
  readonly engine: DataEngine;

  constructor(store: DataStore) {
    this.#store = store;
    this.engine = checkingFace(store);
    this.users = {
      ...over(store, { signUp, logInWithAuthData, authenticate, logIn, logInAs, me, logOut, updateUser, deleteUser, resetPassword }),
      /** The `authData` a user has stored (a provider's data is checked again only when it changed). */
      storedAuthData: async (objectId: string): Promise<unknown> => (await store.row('_User', objectId))?.data.authData,
      /** Whether a user exists (a session the master key creates for it). */
      exists: async (objectId: string): Promise<boolean> => (await store.row('_User', objectId)) !== undefined,
    };
    this.mail = {
      ...over(store, { verifyEmail, userOfResetToken }),
      sendVerificationMail: (ctx: MailContext, user: StoredRow) => sendVerificationMail(ctx, store, user),
      requestVerificationEmail: (ctx: MailContext, body: unknown) => requestVerificationEmail(ctx, store, body),
      requestPasswordReset: (ctx: MailContext, body: unknown) => requestPasswordReset(ctx, store, body),
    };
    this.sessions = {
      ...over(store, { create: createSession, byToken: sessionByToken, clientAuth, ownerAuth: sessionOwnerAuth }),
      /** The user a session belongs to (its `user` pointer's objectId), or undefined when there is no such session. */
      userOf: async (objectId: string): Promise<unknown> => {
        const session = await store.row('_Session', objectId);
        return session && (session.data.user ?? null);
      },
    };
    this.roles = {
      /** Whether a role of this name exists (names are unique: Parse Server's `RolesRouter`). */
      named: async (name: string): Promise<boolean> => (await store.rows('_Role', { where: { name }, limit: 1 })).length > 0,
      /** A role as stored, to check a name or ACL change against. */
      stored: (objectId: string): Promise<StoredRow | undefined> => store.row('_Role', objectId),
    };
    this.config = {
      /** The app's config parameters (Parse's `GET /config`). */
      get: () => store.config(),
      /** Sets config parameters (Parse's `PUT /config`). */
      put: (params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>) => store.putConfig(params, masterKeyOnly),
      /** Deletes every object of a class (Parse's `DELETE /purge/<className>`). */
      purge: (className: string) => store.purge(className),
    };
    this.schemas = over(store, { create: createClass, update: updateClass, drop: dropClass });
    this.aggregate = over(store, { run: runPipeline, distinct: distinctValues });
    this.push = {
      ...over(store, { send: sendPush, prepareInstallationWrite }),
      /** Deletes installations without ACL checks (those an installation write replaces: push/installations.ts). */
      deleteInstallations: (objectIds: readonly string[]) => store.deleteRows('_Installation', objectIds),
    };
    this.jobs = {
      /** Whether a job schedule exists. */
      scheduleExists: async (objectId: string): Promise<boolean> => (await store.row('_JobSchedule', objectId)) !== undefined,
    };
    this.triggers = {
      /** An object as stored before a write, for the `original` of its beforeSave (cloud/hooks.ts). */
      original: (className: string, objectId: string): Promise<StoredRow | undefined> => store.row(className, objectId),
    };
  }

  /** Signup, logins, `me`, user updates and deletes, password resets (users/service.ts). */
  readonly users;
  /** Verification and password reset mails and links (users/emails.ts). */
  readonly mail;
  /** Sessions: created, found by token, the caller's auth from its token (users/service.ts, auth/sessions.ts). */
  readonly sessions;
  /** Role names and stored roles (rest/routes/roles.ts). */
  readonly roles;
  /** `/config` and `/purge`. */
  readonly config;
  /** Class creation, change and removal (schemaChanges.ts). */
  readonly schemas;
  /** `/aggregate` pipelines and distinct values (aggregate/run.ts). */
  readonly aggregate;
  /** Push sends and installation writes (push/). */
  readonly push;
  readonly jobs;
  readonly triggers;

  /**
   * Runs `fn` all or nothing with services (and their `engine`) bound to one storage transaction
   * (DataStore.atomically); called on bound services, runs `fn` in the same transaction.
   */
  atomically<T>(fn: (services: AppServices) => Promise<T>): Promise<T> {
    return this.#store.atomically((store) => fn(store === this.#store ? this : new AppServices(store)));
  }
}

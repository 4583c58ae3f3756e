import { PUBLIC, clpAllows } from './auth/context.js';
import type { ServerSettings } from './settings.js';
import type { StoredClass } from './storage/adapter.js';

/**
 * A Backend App's security check: the report of Parse Server's `GET /security` (its
 * src/Security/CheckRunner.js, report version 1.0.0), made of checks Backyard can really make of
 * an app. Each check is a small named function of what it looks at; it answers `undefined` when
 * the app passes, or the warning (with what it found) when it does not.
 */

/** What the checks look at: the app's options, its classes, and how its cloud code is confined. */
export interface SecurityFacts {
  settings: ServerSettings;
  classes: readonly Readonly<StoredClass>[];
  /** `CloudRuntime.confinement()`. */
  confinement: { mode: 'sandbox' | 'none'; why?: string };
}

/** One check: `test` answers the warning when the app fails it, with what it found. */
interface Check {
  title: string;
  solution: string;
  test(facts: SecurityFacts): string | undefined;
}

/** A check's state as Parse Server's report names it. */
export type CheckState = 'success' | 'fail';

/** Parse Server's report shape: a check's `warning` and `solution` only when it failed. */
export interface SecurityReport {
  report: {
    version: '1.0.0';
    /** `fail` when any check failed. */
    state: CheckState;
    groups: Array<{ name: string; state: CheckState; checks: Array<{ title: string; state: CheckState; warning?: string; solution?: string }> }>;
  };
}

const cloudCodeConfined: Check = {
  title: 'Cloud code runs in a sandbox',
  solution: 'Install bubblewrap on the server (apt-get install bubblewrap) and leave BACKYARD_CLOUD_CONFINEMENT unset or set it to sandbox, then restart Backyard.',
  test: ({ confinement }) =>
    confinement.mode === 'sandbox'
      ? undefined
      : `Cloud code is not confined by the kernel (${confinement.why ?? 'no sandbox'}): it runs under Node's permission model alone and can reach local ports, sockets and processes of the server.`,
};

/** Which operations of a class's CLP admit anyone, without a user or the master key. */
const publicWrites = (cls: Readonly<StoredClass>) => (['create', 'update', 'delete'] as const).filter((op) => clpAllows(cls.classLevelPermissions[op], PUBLIC));

const classesNotPubliclyWritable: Check = {
  title: 'Classes are not writable by everyone',
  solution: 'In each class\'s class-level permissions (PUT /schemas/<ClassName>), give create, update and delete to "requiresAuthentication", users or roles instead of "*"; ACLs then decide per object.',
  test: ({ classes }) => {
    // System classes have their own rules (a signup is a public create of _User).
    const open = classes.filter((c) => !c.className.startsWith('_')).map((c) => ({ name: c.className, ops: publicWrites(c) })).filter((c) => c.ops.length > 0);
    if (open.length === 0) return undefined;
    const listed = open.slice(0, 20).map((c) => `${c.name} (${c.ops.join(', ')})`).join(', ');
    return `Anyone holding the app's client key, which ships in every front end, may write these classes: ${listed}${open.length > 20 ? `, and ${open.length - 20} more` : ''}.`;
  },
};

const clientClassCreationDisabled: Check = {
  title: 'Client class creation disabled',
  solution: 'Once the schema is settled, set the app\'s allowClientClassCreation option to false; classes are then created with the master key (POST /schemas/<ClassName>).',
  test: ({ settings }) => (settings.allowClientClassCreation ? 'Clients may create a class by saving its first object, so anyone may add classes and fill them.' : undefined),
};

const publicFileUploadDisabled: Check = {
  title: 'Files are uploaded only by signed-in users',
  solution: 'Set the app\'s fileUpload.enableForPublic and fileUpload.enableForAnonymousUser options to false.',
  test: ({ settings }) => {
    const who = [settings.fileUpload.enableForPublic ? 'callers without a session' : '', settings.fileUpload.enableForAnonymousUser ? 'anonymous users' : ''].filter(Boolean);
    return who.length ? `File uploads are open to ${who.join(' and ')}: anyone may store files on the server and serve them from its address.` : undefined;
  },
};

const usersCreatedPrivate: Check = {
  title: 'Users are created without public access',
  solution: 'Set the app\'s enforcePrivateUsers option to true.',
  test: ({ settings }) => (settings.enforcePrivateUsers ? undefined : 'New users get public read access in their ACL: any client may read their fields but the protected ones.'),
};

/** The checks, in groups as the report lists them. */
const GROUPS: ReadonlyArray<{ name: string; checks: readonly Check[] }> = [
  { name: 'Backend App configuration', checks: [clientClassCreationDisabled, usersCreatedPrivate, publicFileUploadDisabled] },
  { name: 'Class-level permissions', checks: [classesNotPubliclyWritable] },
  { name: 'Cloud code', checks: [cloudCodeConfined] },
];

/** Runs every check on `facts`; never throws. */
export function securityReport(facts: SecurityFacts): SecurityReport {
  const groups = GROUPS.map((group) => {
    const checks = group.checks.map((check) => {
      const warning = check.test(facts);
      return warning === undefined ? { title: check.title, state: 'success' as const } : { title: check.title, state: 'fail' as const, warning, solution: check.solution };
    });
    return { name: group.name, state: checks.some((c) => c.state === 'fail') ? ('fail' as const) : ('success' as const), checks };
  });
  return { report: { version: '1.0.0', state: groups.some((g) => g.state === 'fail') ? 'fail' : 'success', groups } };
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/shared/sqlite.js';
import { SqliteSql } from '../src/shared/sqliteSql.js';
import { migrations } from '../src/platform/store/migrations.js';
import { AccountService } from '../src/platform/accounts/service.js';
import { makeHome, removeHome } from './helpers/server.js';

const homes: string[] = [];
afterEach(() => homes.splice(0).forEach(removeHome));
const home = () => {
  const h = makeHome();
  homes.push(h);
  return h;
};

describe('platform.db', () => {
  it('runs in WAL mode with synchronous=FULL and every numbered migration applied once', async () => {
    const file = path.join(home(), 'platform.db');
    const db = openDatabase(file, migrations);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.at(-1)!.version);
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    db.close();
    // Reopening applies nothing twice (CREATE TABLE would fail).
    openDatabase(file, migrations).close();
  });

  it('refuses a database written by a newer Backyard', async () => {
    const file = path.join(home(), 'platform.db');
    const raw = new Database(file);
    raw.pragma(`user_version = ${migrations.at(-1)!.version + 1}`);
    raw.close();
    expect(() => openDatabase(file, migrations)).toThrow(/newer than this Backyard knows/);
  });

  it('a failed migration leaves the database as it was', async () => {
    const file = path.join(home(), 'platform.db');
    expect(() => openDatabase(file, [...migrations, { version: 99, name: 'broken', sql: 'CREATE TABLE t (a); SELECT nonsense FROM nowhere;' }])).toThrow();
    const db = openDatabase(file, migrations);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.at(-1)!.version);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 't'").get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('accounts', () => {
  it('stores only a hash of each token and authenticates by it', async () => {
    const raw = openDatabase(path.join(home(), 'platform.db'), migrations);
    const db = new SqliteSql(raw);
    const accounts = new AccountService(db);
    const { account, token } = await accounts.create('gale');
    expect(await accounts.authenticate(token)).toEqual(account);
    expect(await accounts.authenticate(token + 'x')).toBeUndefined();
    expect(await accounts.authenticate('')).toBeUndefined();
    const rows = await db.all<Record<string, unknown>>('SELECT * FROM account_tokens');
    expect(JSON.stringify(rows)).not.toContain(token);
    await expect(accounts.create('GALE')).rejects.toThrow(/already exists/); // logins are case-insensitive
    expect(await accounts.ensure('gale')).toEqual(account);
    await db.close();
  });
});

describe('configuration', () => {
  it('reads variables, lets flags override them, and names the variable that is wrong', () => {
    const h = home();
    const config = loadConfig({ port: '5001' }, { BACKYARD_HOME: h, BACKYARD_PORT: '4001', BACKYARD_HOST: '0.0.0.0', BACKYARD_PUBLIC_URL: 'https://by.example.com/' });
    expect(config).toMatchObject({ home: h, port: 5001, host: '0.0.0.0', publicUrl: 'https://by.example.com', account: 'local', logLevel: 'info' });
    expect(() => loadConfig({}, { BACKYARD_PORT: '70000' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { BACKYARD_PORT: '70000' })).toThrow(/BACKYARD_PORT \(--port\) must be between 0 and 65535/);
    expect(() => loadConfig({}, { BACKYARD_PUBLIC_URL: 'ftp://x' })).toThrow(/BACKYARD_PUBLIC_URL must be an http or https URL/);
    expect(() => loadConfig({}, { BACKYARD_LOG_LEVEL: 'loud' })).toThrow(/BACKYARD_LOG_LEVEL/);
    expect(fs.existsSync(h)).toBe(true);
  });
});

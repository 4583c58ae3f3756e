/**
 * The settings table (src/settings.ts): each setting's variable, flag, default
 * and error text come from its one declaration.
 */
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { SETTINGS, settingsTable } from '../src/settings.js';

describe('loadConfig', () => {
  it('takes each default when nothing is set', () => {
    const config = loadConfig({}, {});
    expect(config).toMatchObject({
      home: path.join(os.homedir(), '.backyard'),
      host: '127.0.0.1',
      port: 4000,
      publicUrl: undefined,
      account: 'local',
      allowedOrigins: [],
      devenvNetwork: 'per-account',
      devenvCpus: 1,
      networkPool: { start: 10 * 2 ** 24 + 201 * 2 ** 16, prefix: 16 },
      networkSubnetPrefix: 27,
      webappSwarm: 'auto',
      github: undefined,
    });
  });

  it('reads the account networks\' pool', () => {
    const config = loadConfig({}, { BACKYARD_NETWORK_POOL: '192.168.128.0/17', BACKYARD_NETWORK_SUBNET_PREFIX: '28' });
    expect(config.networkPool).toEqual({ start: 192 * 2 ** 24 + 168 * 2 ** 16 + 128 * 2 ** 8, prefix: 17 });
    expect(config.networkSubnetPrefix).toBe(28);
  });

  it('takes a node role only with PostgreSQL, the flag over the variable', () => {
    const pg = { BACKYARD_DATABASE_URL: 'postgres://backyard@db.example:5432/backyard' };
    expect(loadConfig({}, {}).role).toBe('all');
    expect(loadConfig({}, { ...pg, BACKYARD_ROLE: 'data' }).role).toBe('data');
    expect(loadConfig({ role: 'platform' }, { ...pg, BACKYARD_ROLE: 'data' }).role).toBe('platform');
    expect(() => loadConfig({}, { BACKYARD_ROLE: 'data' })).toThrow(/BACKYARD_ROLE \(--role\) data needs BACKYARD_DATABASE_URL/);
    expect(() => loadConfig({ role: 'worker' }, pg)).toThrow(/BACKYARD_ROLE \(--role\) must be all, data or platform/);
  });

  it('reads variables, splits lists, converts, and lets flags win', () => {
    const config = loadConfig(
      { port: '5001', home: 'relative-home' },
      {
        BACKYARD_PORT: '5000',
        BACKYARD_PUBLIC_URL: 'https://by.example.com/',
        BACKYARD_ALLOWED_ORIGINS: ' https://a.example , https://b.example ',
        BACKYARD_HOSTING_DOMAIN: 'Apps.Example.COM',
        BACKYARD_DEVENV_CPUS: '0.5',
        BACKYARD_WEBAPP_SWARM: 'off',
        BACKYARD_LOG_LEVEL: '  ',
      },
    );
    expect(config.port).toBe(5001);
    expect(config.home).toBe(path.resolve('relative-home'));
    expect(config.publicUrl).toBe('https://by.example.com');
    expect(config.allowedOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.hostingDomain).toBe('apps.example.com');
    expect(config.devenvCpus).toBe(0.5);
    expect(config.webappSwarm).toBe('off');
    expect(config.logLevel).toBe('info');
  });

  it.each([
    [{ BACKYARD_PORT: 'x' }, 'BACKYARD_PORT (--port) must be a number'],
    [{ BACKYARD_DEVENV_PIDS: '2.5' }, 'BACKYARD_DEVENV_PIDS must be a whole number'],
    [{ BACKYARD_CLOUD_IDLE_MS: '5' }, 'BACKYARD_CLOUD_IDLE_MS must be at least 100'],
    [{ BACKYARD_CLOUD_CONFINEMENT: 'maybe' }, 'BACKYARD_CLOUD_CONFINEMENT must be auto, sandbox or none'],
    [{ BACKYARD_WEBAPP_SWARM: 'on' }, 'BACKYARD_WEBAPP_SWARM must be auto or off'],
    [{ BACKYARD_DEVENV_NETWORK: 'host' }, "BACKYARD_DEVENV_NETWORK must not share the host's network"],
    [{ BACKYARD_ACCOUNT: '-x-' }, 'BACKYARD_ACCOUNT must be a login'],
    [{ DOCKER_HOST: '/var/run/docker.sock' }, 'DOCKER_HOST must be like unix:///var/run/docker.sock'],
    [{ BACKYARD_GITHUB_PRIVATE_KEY: 'pem' }, 'BACKYARD_GITHUB_APP_ID must be set'],
    [{ BACKYARD_NETWORK_POOL: '10.201.0.0' }, 'BACKYARD_NETWORK_POOL must be an IPv4 range in CIDR notation, such as 10.201.0.0/16'],
    [{ BACKYARD_NETWORK_POOL: '10.201.0.0/33' }, 'BACKYARD_NETWORK_POOL must be an IPv4 range in CIDR notation'],
    [{ BACKYARD_NETWORK_POOL: 'fd00::/64' }, 'BACKYARD_NETWORK_POOL must be an IPv4 range in CIDR notation'],
    [{ BACKYARD_NETWORK_POOL: '10.201.5.0/16' }, 'BACKYARD_NETWORK_POOL must start at the first address of its range'],
    [{ BACKYARD_NETWORK_SUBNET_PREFIX: '30' }, 'BACKYARD_NETWORK_SUBNET_PREFIX must be at most 29'],
    [{ BACKYARD_NETWORK_POOL: '10.201.0.0/24', BACKYARD_NETWORK_SUBNET_PREFIX: '20' }, 'BACKYARD_NETWORK_SUBNET_PREFIX 20 makes subnets larger than BACKYARD_NETWORK_POOL 10.201.0.0/24'],
  ])('refuses %o naming the variable', (env, text) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, env)).toThrow(`Invalid configuration: ${text}`);
  });
});

describe('the README table', () => {
  it('has one row per setting, naming its variable and flag', () => {
    const rows = settingsTable().split('\n').slice(2);
    expect(rows).toHaveLength(Object.keys(SETTINGS).length);
    expect(rows[0]).toBe('| `BACKYARD_HOME` (`--home`) | `~/.backyard` | state folder: `platform.db` (unless `BACKYARD_DATABASE_URL`), `apps/<appId>/`, `git/` |');
    for (const s of Object.values(SETTINGS)) expect(settingsTable()).toContain(`\`${s.variable}\``);
  });
});

/**
 * The parts of Web Apps on Docker Swarm that need no engine: the `replicas` rule, the service's
 * Engine API body (swarm.ts) and the names of services and networks (labels.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManagementError } from '../src/errors.js';
import { LABEL_ACCOUNT, LABEL_TASK_DEPLOYMENT, LABEL_WEBAPP, accountOverlayName, reachNetworkName, serviceName } from '../src/platform/webapps/labels.js';
import { MAX_REPLICAS, MIN_REPLICAS, checkReplicas } from '../src/platform/webapps/names.js';
import { serviceSpec } from '../src/platform/webapps/swarm.js';

const settings = { home: '/srv/backyard', dockerHost: undefined, memoryMb: 64, cpus: 0.5 };
const input = { accountId: 'acc1', webAppId: 'app1', deploymentId: 'dep1', image: 'backyard-webapp-x/site:dep1', port: 8080, env: ['A=1'], replicas: 3 };

describe('replicas', () => {
  it('accepts every integer from 1 to 10', () => {
    fc.assert(fc.property(fc.integer({ min: MIN_REPLICAS, max: MAX_REPLICAS }), (n) => checkReplicas(n)));
  });

  it('refuses anything else with a text naming replicas and its bounds', () => {
    const bad = fc.oneof(
      fc.integer().filter((n) => n < MIN_REPLICAS || n > MAX_REPLICAS),
      fc.double({ noNaN: false }).filter((n) => !Number.isInteger(n)),
    );
    fc.assert(
      fc.property(bad, (n) => {
        let thrown: unknown;
        try {
          checkReplicas(n);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(ManagementError);
        expect((thrown as Error).message).toMatch(/^replicas must be an integer from 1 to 10 \(it is /);
      }),
    );
  });
});

describe('the service of a Web App', () => {
  const spec = serviceSpec(settings, input);

  it('runs the replicas with rolling start-first updates, DNS round robin and no published port', () => {
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 3 } });
    expect(spec.UpdateConfig).toMatchObject({ Parallelism: 1, Order: 'start-first' });
    expect(spec.RollbackConfig).toMatchObject({ Order: 'start-first' });
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  });

  it('is on the account\'s overlay and the home\'s reach network, labelled like the containers, confined like them', () => {
    expect(spec.TaskTemplate?.Networks).toEqual([{ Target: accountOverlayName(settings.home, 'acc1') }, { Target: reachNetworkName(settings.home) }]);
    expect(spec.Labels).toMatchObject({ [LABEL_ACCOUNT]: 'acc1', [LABEL_WEBAPP]: 'app1' });
    const container = spec.TaskTemplate?.ContainerSpec as Record<string, any>;
    expect(container).toMatchObject({ Image: input.image, Env: ['A=1'], Labels: { [LABEL_TASK_DEPLOYMENT]: 'dep1', [LABEL_WEBAPP]: 'app1' }, CapabilityDrop: ['ALL'] });
    // No health check in the spec: the image's own HEALTHCHECK applies when it has one.
    expect(container.HealthCheck).toBeUndefined();
    expect(spec.TaskTemplate?.Resources?.Limits).toMatchObject({ MemoryBytes: 64 * 1024 * 1024, NanoCPUs: 500_000_000 });
  });

  it('names fit the engine\'s 63 characters and differ by home and app', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.string({ minLength: 1, maxLength: 40 }), (home, id) => {
        for (const name of [serviceName(home, id), accountOverlayName(home, id), reachNetworkName(home)]) expect(name).toMatch(/^[a-z0-9-]{1,63}$/);
      }),
    );
    expect(serviceName('/a', 'x')).not.toBe(serviceName('/b', 'x'));
    expect(serviceName('/a', 'x')).not.toBe(serviceName('/a', 'y'));
  });
});

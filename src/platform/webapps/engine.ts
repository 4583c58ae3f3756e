import { engineAddress, engineMessage, engineStatus, isUnreachable } from '../devenvs/engine.js';

/**
 * How Web App deployments talk about Docker engine failures. Deployments fail in the background, so
 * these become a deployment's `error` (with the step prepended by the pipeline), never an HTTP answer.
 */

/** A failure of one step of a deployment; `message` says why, for the person reading `error`. */
export class DeployError extends Error {
  override name = 'DeployError';
}

/** The reason text of an engine failure while doing `doing` (e.g. "create the container"). */
export function engineReason(error: unknown, doing: string, dockerHost: string | undefined): string {
  if (error instanceof DeployError) return error.message;
  if (isUnreachable(error)) {
    const code = (error as { code?: string }).code;
    return `Docker is not reachable at ${engineAddress(dockerHost)} (${code}). Start the Docker engine, then deploy again with startDeployment.`;
  }
  if (engineStatus(error) !== undefined) return `the Docker engine could not ${doing}: ${engineMessage(error)}.`;
  return `could not ${doing}: ${error instanceof Error ? error.message : String(error)}.`;
}

/**
 * Runs one engine call with a time-out (every wait on the engine has one: style.md, example 12).
 * @throws DeployError with `engineReason`'s text when it fails or takes longer than `ms`.
 */
export async function engineStep<T>(dockerHost: string | undefined, doing: string, ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeployError(`the Docker engine did not ${doing} within ${Math.round(ms / 1000)} s. Check the engine (docker info), then deploy again.`));
    }, ms);
  });
  try {
    return await Promise.race([call(controller.signal), timeout]);
  } catch (error) {
    throw new DeployError(engineReason(error, doing, dockerHost));
  } finally {
    clearTimeout(timer);
  }
}

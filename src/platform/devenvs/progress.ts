import type { LiveExecution } from './executions.js';

/** How often executeCommand reports a running command's progress. */
const PROGRESS_EVERY_MS = 1000;

/** The end of a command's output as a progress message shows it: its last line, at most 200 characters. */
function outputEnd(text: string): string {
  const lines = text.trimEnd().split('\n');
  const last = lines[lines.length - 1] ?? '';
  return last.length > 200 ? `…${last.slice(-200)}` : last;
}

/**
 * Reports `execution` to `progress`: once at start, then every PROGRESS_EVERY_MS with its run time
 * and the end of its output when that grew (its tails keep 1 MiB each, so the length tells).
 * @returns the function that stops reporting.
 */
export function reportWhileRunning(execution: LiveExecution, command: string, progress: (message: string) => void): () => void {
  const started = Date.now();
  progress(`Started sh -c ${JSON.stringify(command.length > 200 ? `${command.slice(0, 200)}…` : command)}.`);
  let seen = -1;
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    const { stdout, stderr } = execution.snapshot();
    const output = `${stdout}${stderr}`;
    if (output.length === seen) return progress(output ? `Running for ${seconds} s, no new output.` : `Running for ${seconds} s, no output yet.`);
    seen = output.length;
    progress(`Running for ${seconds} s; output so far ends with: ${outputEnd(output)}`);
  }, PROGRESS_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

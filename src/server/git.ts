import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../platform/platform.js';
import type { Account } from '../platform/accounts/service.js';
import { gitEnvironment, SERVER_GIT_OPTIONS } from '../platform/repohost/gitProcess.js';
import { isOwnerLogin, isRepoName } from '../platform/repohost/names.js';

/** The smart HTTP requests git makes, and whether each writes. */
type GitService = 'git-upload-pack' | 'git-receive-pack';

/** A parsed `/git/<owner>/<repo>.git/<rest>` request. */
export interface GitRequestTarget {
  owner: string;
  repo: string;
  /** `/info/refs`, `/git-upload-pack` or `/git-receive-pack`. */
  rest: string;
  query: string;
}

/**
 * Splits the path of a git host request (below the `/git` mount): `/<owner>/<repo>.git/<rest>`;
 * the `.git` ending may be left out, as GitHub allows. Undefined for anything else.
 */
export function parseGitTarget(url: string): GitRequestTarget | undefined {
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const match = /^\/([^/]+)\/([^/]+?)(?:\.git)?(\/info\/refs|\/git-upload-pack|\/git-receive-pack)$/.exec(pathname);
  if (!match) return undefined;
  const [, owner, repo, rest] = match as unknown as [string, string, string, string];
  if (!isOwnerLogin(owner) || !isRepoName(repo)) return undefined;
  return { owner, repo, rest, query };
}

/** Which git service a request asks for, or undefined when it is not a smart HTTP request. */
function serviceOf(method: string, target: GitRequestTarget): GitService | undefined {
  if (target.rest === '/info/refs') {
    if (method !== 'GET') return undefined;
    const service = new URLSearchParams(target.query).get('service');
    return service === 'git-upload-pack' || service === 'git-receive-pack' ? service : undefined;
  }
  if (method !== 'POST') return undefined;
  return target.rest === '/git-upload-pack' ? 'git-upload-pack' : 'git-receive-pack';
}

/**
 * The secret of an `Authorization` header: the password of `Basic` (any user name, as git sends
 * `x-access-token:<token>`), or a `Bearer` token. Undefined when absent or malformed.
 */
export function credentialOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return bearer?.[1];
}

const text = (reply: FastifyReply, status: number, message: string, headers: Record<string, string> = {}) =>
  reply.code(status).headers(headers).type('text/plain; charset=utf-8').send(`${message}\n`);

/**
 * Mounts the built-in git host (docs/design.md, URL table: `/git/<owner>/<repo>.git`): git's smart HTTP
 * protocol (clone, fetch, push) answered by `git http-backend` run as a CGI. Register with the
 * prefix `/git`.
 *
 * Access: HTTP Basic with any user name and, as the password, an account token or an access token
 * from operation 7 (`Bearer` works too). Without a valid credential: 401 with
 * `WWW-Authenticate: Basic realm="backyard"`, so git asks for (or sends) its credentials. A valid
 * credential reaches only its own account's repositories: any other owner's repository, existing or
 * not, answers 404 exactly as a missing one does, so a token learns nothing about other accounts
 * (docs/design.md, decision 2). A push to a missing repository of one's own login creates it.
 *
 * Request bodies are streamed to git untouched (no parsing, no size limit; gzip is git's to undo),
 * and git's answer is streamed back.
 */
export function gitHost(platform: Platform) {
  const { services, log } = platform;
  const host = services.repoHost;

  return async (app: FastifyInstance) => {
    // Leave every body as the raw stream: git http-backend reads it (of any size, gzip or not).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    app.route({
      method: ['GET', 'POST'],
      url: '/*',
      handler: async (request, reply) => {
        const target = request.url.startsWith('/git/') ? parseGitTarget(request.url.slice('/git'.length)) : undefined;
        if (!target) return text(reply, 404, 'Not found: repositories are at /git/<owner>/<repo>.git.');
        const service = serviceOf(request.method, target);
        if (!service) return text(reply, 403, 'Only git\'s smart HTTP protocol is served here: use git clone, fetch or push.');

        const secret = credentialOf(request.headers.authorization);
        const account = secret === undefined ? undefined : await host.authenticate(secret);
        if (!account) {
          return text(
            reply,
            401,
            secret === undefined
              ? 'Authentication required: use any user name and a Backyard token (an account token or one from createRepohostInstallationAccessToken) as the password.'
              : 'Authentication failed: the token is unknown, revoked or expired. Mint a new one with createRepohostInstallationAccessToken.',
            { 'WWW-Authenticate': 'Basic realm="backyard"' },
          );
        }
        const notFound = () => text(reply, 404, `Repository not found: ${target.owner}/${target.repo}.`);
        if (target.owner.toLowerCase() !== account.login.toLowerCase()) return notFound();
        if (!host.builtin.exists(account.login, target.repo)) {
          if (service !== 'git-receive-pack') return notFound();
          await host.builtin.create(account.login, target.repo);
        }

        reply.hijack();
        const cgi = () => runHttpBackend(request, reply.raw, { root: host.builtin.root, pathInfo: host.builtin.projectPath(account.login, target.repo) + target.rest, query: target.query, account });
        const run = request.method === 'POST' && service === 'git-receive-pack' ? () => host.builtin.receivePush(account.login, target.repo, account.login, cgi) : cgi;
        try {
          await run();
          // Ended only now, after the push event has fired: when `git push` returns, listeners have run.
          reply.raw.end();
        } catch (err) {
          log.error({ err, owner: target.owner, repo: target.repo, service }, 'git http-backend failed');
          failRaw(reply.raw, 500, 'The git host failed to answer; the server log has the details.');
        }
      },
    });
  };
}

/** Answers a plain-text failure on a hijacked response, or cuts the connection once the answer has begun. */
function failRaw(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

/**
 * Runs `git http-backend` for one request as a CGI (RFC 3875): the CGI variables in its
 * environment, the request body on its stdin, and its stdout (CGI headers, a blank line, the body)
 * turned into the HTTP answer. Resolves when git has exited and all its output is written to `res`,
 * which the caller then ends (so that it can act, e.g. fire the push event, before the client sees
 * the end of the answer).
 * @throws Error when git cannot be started or exits before writing its headers.
 */
export function runHttpBackend(
  request: FastifyRequest,
  res: ServerResponse,
  cgi: { root: string; pathInfo: string; query: string; account: Account },
): Promise<void> {
  const req: IncomingMessage = request.raw;
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const env: Record<string, string> = {
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    SERVER_SOFTWARE: 'backyard',
    GIT_PROJECT_ROOT: cgi.root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: cgi.pathInfo,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: cgi.query,
    REMOTE_USER: cgi.account.login,
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    CONTENT_TYPE: header('content-type') ?? '',
  };
  const contentLength = header('content-length');
  if (contentLength !== undefined) env.CONTENT_LENGTH = contentLength;
  const encoding = header('content-encoding');
  if (encoding !== undefined) env.HTTP_CONTENT_ENCODING = encoding;
  // Protocol v2 is asked for in this header; http-backend passes it on to upload-pack.
  const protocol = header('git-protocol');
  if (protocol !== undefined) env.HTTP_GIT_PROTOCOL = protocol;

  return new Promise((resolve, reject) => {
    const child = spawn('git', [...SERVER_GIT_OPTIONS, 'http-backend'], { env: gitEnvironment(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve();
    };
    child.on('error', (err) => finish(new Error(`git http-backend could not be started: ${err.message}`)));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk;
    });

    // The request body goes to git as it arrives; a client that goes away ends git too.
    child.stdin.on('error', () => undefined); // git may exit without reading everything (a refused request)
    req.pipe(child.stdin);
    const abort = () => {
      if (!res.writableFinished) child.kill('SIGTERM');
    };
    res.once('close', abort);

    let head = Buffer.alloc(0);
    let headersDone = false;
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = headerEnd(head);
      if (!end) {
        if (head.length > 65536) {
          child.kill('SIGTERM');
          finish(new Error('git http-backend wrote no end of headers'));
        }
        return;
      }
      headersDone = true;
      child.stdout.pause();
      child.stdout.off('data', onData);
      const { status, headers } = parseCgiHeaders(head.subarray(0, end.at).toString('latin1'));
      res.writeHead(status, headers);
      const rest = head.subarray(end.at + end.length);
      if (rest.length > 0) res.write(rest);
      child.stdout.pipe(res, { end: false });
    };
    child.stdout.on('data', onData);

    child.on('close', (code, signal) => {
      res.off('close', abort);
      if (!headersDone) {
        finish(new Error(`git http-backend exited (${signal ?? code}) before answering: ${stderr.trim()}`));
        return;
      }
      if (code !== 0 && !res.destroyed) request.log.warn({ code, signal, stderr: stderr.trim() }, 'git http-backend exited with an error');
      // Every chunk of stdout was handed to `res` before its 'end', which precedes 'close'.
      finish();
    });
  });
}

/** Where the CGI header block ends: at the first blank line (`\r\n\r\n` or `\n\n`). */
function headerEnd(buffer: Buffer): { at: number; length: number } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return undefined;
}

/** CGI response headers: `Status: 404 Not Found` gives the status (default 200); the others are HTTP headers. */
export function parseCgiHeaders(block: string): { status: number; headers: Record<string, string | string[]> } {
  let status = 200;
  const headers: Record<string, string | string[]> = {};
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') {
      const code = Number.parseInt(value, 10);
      if (code >= 100 && code <= 599) status = code;
      continue;
    }
    const existing = headers[name];
    headers[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return { status, headers };
}

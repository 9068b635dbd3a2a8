import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Operation, ROUTES } from '../cloud/routes.js';
import { checkAuthorization } from './bearer-auth.js';
import { BodyTooLarge, parseJsonBody, readBodyIf, sendJson, sendMessage, sendText } from './http-io.js';
import type { Fields } from './read-fields.js';
import { createRouteMatcher } from './route-matcher.js';
import { instanceRoutes } from './routes/instances.js';
import { k8sRoutes } from './routes/k8s.js';
import type { Handler } from './routes/kit.js';
import { slurmRoutes } from './routes/slurm.js';
import { SimError, statusFor } from './sim-error.js';
import type { SimRuntime } from './sim-runtime.js';
import type { SimProject } from './sim-state.js';

// The infrastructure API (/api/v1alpha1) in the shape the simulator was started with. Routes come from
// src/cloud/routes.ts; a request is matched, counted (creates), faulted, authenticated, scoped to its
// project, then handled. Errors use the statuses the operation lists, with a `{ message }` body.

/** The operations that create something, and the body field that names what they create. */
export const CREATE_OPERATIONS: Partial<Record<Operation, string>> = {
  createProject: 'name',
  createInstance: 'name',
  createFilesystem: 'name',
  createK8sCluster: 'name',
  registerK8sCluster: 'name',
  createK8sNodePool: 'name',
  createSlurmCluster: 'name',
  createSlurmNodePool: 'name',
  addSlurmUser: 'username',
};

/** The name a create request asks for, for the create counts; readable even when the body is not. */
export function createdName(body: unknown, field: string): string {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const v = (body as Fields)[field];
    if (typeof v === 'string') return v;
  }
  return '(no name)';
}

const HANDLERS: Record<Operation, Handler> = { ...instanceRoutes, ...k8sRoutes, ...slurmRoutes };

export interface InfraApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void>;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

export function createInfraApi(rt: SimRuntime): InfraApi {
  const matcher = createRouteMatcher(ROUTES[rt.shape]);
  const rule = {
    staticToken: rt.credentials.cloudToken,
    jwtSecret: rt.credentials.jwtSecret,
    audience: rt.cloudAudience,
    now: rt.clock.now,
  };

  return {
    async handle(req, res, path, query) {
      const method = req.method ?? 'GET';
      const match = matcher.match(method, path);
      if (!match) {
        req.resume();
        sendMessage(
          res,
          404,
          `No operation ${method} ${path} in shape ${rt.shape} of the infrastructure API; see docs/cloud-api.md for its routes.`,
        );
        return;
      }
      const { operation, route, params } = match;
      const fail = (err: SimError) => sendMessage(res, statusFor(err.kind, route.errors), err.message);

      let raw = '';
      try {
        raw = await readBodyIf(req, METHODS_WITH_BODY.has(method));
      } catch (err) {
        if (err instanceof BodyTooLarge)
          sendMessage(res, 413, `The request body is too large: ${err.message}.`);
        else res.destroy();
        return;
      }
      let body: unknown;
      let bodyError: SimError | undefined;
      try {
        body = parseJsonBody(raw);
      } catch (err) {
        if (!(err instanceof SimError)) throw err;
        bodyError = err;
      }
      const nameField = CREATE_OPERATIONS[operation];
      const name = nameField ? createdName(body, nameField) : '';
      if (nameField) rt.state.countCreateAttempt(operation, name);

      if (await rt.gate.apply(operation, true, res)) return;

      const authProblem = checkAuthorization(req.headers.authorization, rule);
      if (authProblem) {
        sendMessage(res, 401, `Unauthorized: ${authProblem}.`, { 'www-authenticate': 'Bearer' });
        return;
      }

      let project: SimProject | undefined;
      if (route.projectHeader) {
        try {
          const header = req.headers['x-project-id'];
          project = rt.state.resolveProject(Array.isArray(header) ? header[0] : header);
        } catch (err) {
          if (err instanceof SimError) return fail(err);
          throw err;
        }
      }

      if (nameField) rt.state.countCreate(operation, name);
      try {
        if (bodyError) throw bodyError;
        const reply = HANDLERS[operation]({ shape: rt.shape, state: rt.state, project, params, body, query });
        if ('json' in reply) sendJson(res, route.success, route.success === 204 ? undefined : reply.json);
        else if ('text' in reply) sendText(res, route.success, reply.contentType, reply.text, reply.headers);
        else sendJson(res, route.success, undefined);
      } catch (err) {
        if (err instanceof SimError) return fail(err);
        throw err;
      }
    },
  };
}

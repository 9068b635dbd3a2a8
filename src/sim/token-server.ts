import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { safeEqual } from './bearer-auth.js';
import { BodyTooLarge, parseLooseBody, readBody, sendJson, sendMessage } from './http-io.js';
import { signJwt } from './jwt.js';
import type { SimRuntime } from './sim-runtime.js';

// The OAuth 2.0 client-credentials token server (POST /auth/oauth/token, spec: Authentication).
// Tokens are HS256 JWTs signed with a per-run secret, valid 86400 s on the simulator's clock.

export const TOKEN_OPERATION = 'oauthToken';
export const TOKEN_LIFETIME_SECONDS = 86_400;

const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
  sendJson(res, status, { error, error_description: description, message: description });

export interface TokenServer {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createTokenServer(rt: SimRuntime): TokenServer {
  const audiences = [rt.cloudAudience, rt.metricsAudience];
  return {
    async handle(req, res, path) {
      if (!/^\/oauth\/token\/?$/.test(path) || req.method !== 'POST') {
        req.resume();
        sendMessage(
          res,
          404,
          `No operation ${req.method ?? 'GET'} /auth${path}; tokens come from POST /auth/oauth/token.`,
        );
        return;
      }
      let raw: string;
      try {
        raw = await readBody(req);
      } catch (err) {
        if (err instanceof BodyTooLarge)
          sendMessage(res, 413, `The request body is too large: ${err.message}.`);
        else res.destroy();
        return;
      }
      // The token server is faulted only when named: "*" means the infrastructure and platform APIs.
      if (await rt.gate.apply(TOKEN_OPERATION, false, res)) return;

      const body = parseLooseBody(raw, req.headers['content-type']);
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        oauthError(
          res,
          400,
          'invalid_request',
          'The body must be JSON with client_id, client_secret, audience and grant_type.',
        );
        return;
      }
      const o = body as Record<string, unknown>;
      if (o.grant_type !== 'client_credentials') {
        oauthError(res, 400, 'unsupported_grant_type', 'grant_type must be "client_credentials".');
        return;
      }
      const id = typeof o.client_id === 'string' ? o.client_id : '';
      const secret = typeof o.client_secret === 'string' ? o.client_secret : '';
      if (!safeEqual(id, rt.credentials.clientId) || !safeEqual(secret, rt.credentials.clientSecret)) {
        oauthError(res, 401, 'invalid_client', 'The client id or client secret is wrong.');
        return;
      }
      const audience = typeof o.audience === 'string' ? o.audience.replace(/\/+$/, '') : '';
      if (!audiences.some((a) => a.replace(/\/+$/, '') === audience)) {
        oauthError(
          res,
          400,
          'invalid_request',
          `Unknown audience; ask for ${audiences.join(' (infrastructure API) or ')} (metrics).`,
        );
        return;
      }
      const iat = Math.floor(rt.clock.now() / 1000);
      const accessToken = signJwt(
        {
          iss: rt.authUrl,
          sub: rt.credentials.clientId,
          aud: audience,
          iat,
          exp: iat + TOKEN_LIFETIME_SECONDS,
          jti: randomUUID(),
        },
        rt.credentials.jwtSecret,
      );
      sendJson(
        res,
        200,
        { access_token: accessToken, expires_in: TOKEN_LIFETIME_SECONDS, token_type: 'Bearer' },
        { 'cache-control': 'no-store' },
      );
    },
  };
}

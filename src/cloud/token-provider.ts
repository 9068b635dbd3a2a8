import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { AppError, ErrorCode } from '../errors.js';

/** Supplies the bearer for a request; `invalidate` is called after a 401 so the next call refreshes. */
export interface TokenProvider {
  token(signal?: AbortSignal): Promise<string>;
  invalidate(token: string): void;
}

export function staticToken(value: string): TokenProvider {
  return {
    token: async () => value,
    invalidate: () => {},
  };
}

export interface ClientCredentialsOptions {
  /** Token server base; the token is requested at `${authUrl}/oauth/token`. */
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly audience: string;
  /** Refresh this long before `expires_in` runs out. */
  readonly marginMs?: number;
  readonly timeoutMs?: number;
  readonly now?: () => number;
  readonly dispatcher?: Dispatcher;
}

interface Cached {
  readonly value: string;
  readonly refreshAt: number;
}

/**
 * OAuth 2.0 client credentials (spec: Authentication). One refresh at a time however many requests
 * wait: they all share the pending promise. The secret only ever goes into the token request body.
 */
export function clientCredentials(options: ClientCredentialsOptions): TokenProvider {
  const now = options.now ?? Date.now;
  const margin = options.marginMs ?? 5 * 60_000;
  let cached: Cached | undefined;
  let pending: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const url = `${options.authUrl.replace(/\/+$/, '')}/oauth/token`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          client_id: options.clientId,
          client_secret: options.clientSecret,
          audience: options.audience,
          grant_type: 'client_credentials',
        }),
        headersTimeout: options.timeoutMs ?? 10_000,
        bodyTimeout: options.timeoutMs ?? 10_000,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
    } catch (err) {
      throw new AppError(
        ErrorCode.Auth,
        `Could not reach the token server at ${url}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      let detail = '';
      try {
        const body = JSON.parse(text) as { error?: string; error_description?: string; message?: string };
        detail = body.error_description ?? body.message ?? body.error ?? '';
      } catch {}
      throw new AppError(
        ErrorCode.Auth,
        `The token server refused the client credentials (HTTP ${res.statusCode}${detail ? `: ${detail}` : ''}). Check the client id, secret and audience.`,
      );
    }
    let body: { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      throw new AppError(ErrorCode.Auth, 'The token server answered with something other than JSON.');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new AppError(ErrorCode.Auth, 'The token server answer has no access_token.');
    }
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 86_400) * 1000;
    // A short-lived token still gets used for at least half its life rather than refreshed on every call.
    const refreshIn = Math.max(lifetimeMs - margin, lifetimeMs / 2);
    cached = { value: body.access_token, refreshAt: now() + refreshIn };
    return body.access_token;
  }

  return {
    async token() {
      if (cached && now() < cached.refreshAt) return cached.value;
      pending ??= fetchToken().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate(token: string) {
      if (cached?.value === token) cached = undefined;
    },
  };
}

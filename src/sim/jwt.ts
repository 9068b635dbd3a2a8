import { createHmac, timingSafeEqual } from 'node:crypto';

// HS256 JSON Web Tokens for the simulator's token server, with node:crypto only (no dependency).

export interface JwtClaims {
  readonly iss?: string;
  readonly sub?: string;
  readonly aud?: string | readonly string[];
  /** Seconds since the epoch. */
  readonly iat?: number;
  /** Seconds since the epoch. */
  readonly exp?: number;
  readonly [claim: string]: unknown;
}

export type JwtVerdict =
  | { readonly ok: true; readonly claims: JwtClaims }
  | { readonly ok: false; readonly reason: string };

export interface VerifyJwtOptions {
  readonly secret: string;
  /** The audience the token must carry (a trailing slash on either side is ignored). */
  readonly audience: string;
  /** Current time in milliseconds (the simulator's clock, so tests can expire tokens). */
  readonly now: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function mac(input: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(input).digest();
}

export function signJwt(claims: JwtClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signingInput = `${HEADER}.${payload}`;
  return `${signingInput}.${mac(signingInput, secret).toString('base64url')}`;
}

const trimSlash = (value: string): string => value.replace(/\/+$/, '');

/** Checks signature, algorithm, audience and expiry; the reason never contains the token or secret. */
export function verifyJwt(token: string, options: VerifyJwtOptions): JwtVerdict {
  const parts = token.split('.');
  if (parts.length !== 3)
    return { ok: false, reason: 'the bearer token is neither the static token nor a JWT' };
  const [header, payload, signature] = parts as [string, string, string];
  let head: { alg?: unknown };
  let claims: JwtClaims;
  try {
    head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown };
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as JwtClaims;
  } catch {
    return { ok: false, reason: 'the JWT is not readable (bad base64url or JSON)' };
  }
  if (head.alg !== 'HS256') return { ok: false, reason: 'the JWT is not signed with HS256' };
  const expected = mac(`${header}.${payload}`, options.secret);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'the JWT signature does not match this token server' };
  }
  if (claims === null || typeof claims !== 'object')
    return { ok: false, reason: 'the JWT claims are not an object' };
  const auds = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
  const want = trimSlash(options.audience);
  if (!auds.some((a) => typeof a === 'string' && trimSlash(a) === want)) {
    return {
      ok: false,
      reason: `the JWT was issued for another audience; request one for ${options.audience}`,
    };
  }
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= options.now) {
    return { ok: false, reason: 'the JWT has expired; request a new token' };
  }
  return { ok: true, claims };
}

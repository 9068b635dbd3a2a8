import { timingSafeEqual } from 'node:crypto';
import { verifyJwt } from './jwt.js';

// Bearer checks shared by the infrastructure API and the metrics hook: a static token, or a JWT from
// the simulator's token server for the right audience that has not expired on the simulator's clock.

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function bearerOf(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m ? m[1] : undefined;
}

export interface BearerRule {
  readonly staticToken: string;
  readonly jwtSecret: string;
  readonly audience: string;
  readonly now: () => number;
}

/** Null when the token is accepted, else why not (never echoing the token). */
export function checkToken(token: string, rule: BearerRule): string | null {
  if (safeEqual(token, rule.staticToken)) return null;
  const verdict = verifyJwt(token, { secret: rule.jwtSecret, audience: rule.audience, now: rule.now() });
  return verdict.ok ? null : verdict.reason;
}

export function checkAuthorization(header: string | undefined, rule: BearerRule): string | null {
  if (header === undefined || header.trim() === '') {
    return 'no Authorization header; send "Authorization: Bearer <token>"';
  }
  const token = bearerOf(header);
  if (!token) return 'the Authorization header must look like "Bearer <token>"';
  return checkToken(token, rule);
}

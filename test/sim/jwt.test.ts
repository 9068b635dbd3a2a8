import { describe, expect, it } from 'vitest';
import { signJwt, verifyJwt } from '../../src/sim/jwt.js';

const secret = 'test-secret';
const now = Date.UTC(2026, 0, 1);
const claims = { sub: 'client', aud: 'http://sim/api/v1alpha1', iat: now / 1000, exp: now / 1000 + 86_400 };

describe('jwt', () => {
  it('accepts a token it signed for the right audience before it expires', () => {
    const token = signJwt(claims, secret);
    expect(token.split('.')).toHaveLength(3);
    const verdict = verifyJwt(token, { secret, audience: 'http://sim/api/v1alpha1/', now: now + 1000 });
    expect(verdict).toEqual({ ok: true, claims });
  });

  it('refuses another audience, an expired token, a foreign signature and garbage, saying why', () => {
    const token = signJwt(claims, secret);
    const reason = (t: string, o: Partial<{ secret: string; audience: string; now: number }> = {}) => {
      const v = verifyJwt(t, { secret, audience: claims.aud, now, ...o });
      return v.ok ? 'ok' : v.reason;
    };
    expect(reason(token, { audience: 'http://sim' })).toMatch(/another audience/);
    expect(reason(token, { now: now + 86_400_000 })).toMatch(/expired/);
    expect(reason(token, { secret: 'other' })).toMatch(/signature/);
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 1e6 })).toString('base64url');
    expect(reason(`${h}.${forged}.${s}`)).toMatch(/signature/);
    expect(reason('not-a-jwt')).toMatch(/neither/);
  });
});

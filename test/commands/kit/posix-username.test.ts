import { describe, expect, it } from 'vitest';
import { USERNAME } from '../../../src/cloud/rules.js';
import { posixUsername, usernameFromSlackUser } from '../../../src/commands/kit/posix-username.js';

describe('posixUsername', () => {
  it.each([
    ['Ada Lovelace', 'ada_lovelace'],
    ['ada.lovelace', 'ada_lovelace'],
    ['Jean-Luc Picard', 'jean-luc_picard'],
    ["Conan O'Brien", 'conan_obrien'],
    ['Zoë Saldaña', 'zoe_saldana'],
    ['Łukasz Żółć', 'lukasz_zolc'],
    ['Søren Ærø', 'soren_aero'],
    ['Straße', 'strasse'],
    ['François Müller-Lüdenscheidt', 'francois_muller-ludenscheidt'],
    ['Дмитрий Шостакович', 'dmitriy_shostakovich'],
    ['Σωκράτης', 'sokratis'],
    ['ＡＤＡ', 'ada'],
    ['Ada Lovelace (she/her)', 'ada_lovelace'],
    ['🚀 Ada 🚀', 'ada'],
    ['  ada   lovelace  ', 'ada_lovelace'],
    ['ada -- lovelace', 'ada_lovelace'],
  ])('turns %j into %j', (input, expected) => {
    expect(posixUsername(input)).toBe(expected);
  });

  it('gives nothing for names with no letters it can use', () => {
    expect(posixUsername('山田太郎')).toBeUndefined();
    expect(posixUsername('김민준')).toBeUndefined();
    expect(posixUsername('🚀🔥')).toBeUndefined();
    expect(posixUsername('---')).toBeUndefined();
    expect(posixUsername('')).toBeUndefined();
  });

  it('keeps the latin part of a mixed name', () => {
    expect(posixUsername('山田 Taro')).toBe('taro');
  });

  it('puts a letter in front of a leading digit', () => {
    expect(posixUsername('2pac')).toBe('u2pac');
    expect(posixUsername('42 Ada')).toBe('u42_ada');
  });

  it('cuts long names to 32 characters without a trailing separator', () => {
    const name = posixUsername('Maximilian Alexander von Habsburg-Lothringen');
    expect(name).toBe('maximilian_alexander_von_habsbur');
    expect(name!.length).toBeLessThanOrEqual(32);
    expect(posixUsername(`${'a'.repeat(31)} b`)).toBe('a'.repeat(31));
  });

  it('always returns what the POSIX rule accepts', () => {
    const samples = ['Ada', '_x', 'x_', 'A.B.C', '9', '9 lives', 'Ñandú', 'İstanbul', 'ǅemal', 'ﬁnn', '™'];
    for (const sample of samples) {
      const name = posixUsername(sample);
      if (name !== undefined) expect(name).toMatch(USERNAME);
    }
  });
});

describe('usernameFromSlackUser', () => {
  it('prefers the display name, then the real name, then the account name', () => {
    expect(
      usernameFromSlackUser({
        name: 'ada',
        real_name: 'Augusta Ada King',
        profile: { display_name: 'Ada Lovelace', real_name: 'Augusta Ada King' },
      }),
    ).toBe('ada_lovelace');
    expect(
      usernameFromSlackUser({ name: 'ada', real_name: 'Augusta King', profile: { display_name: '' } }),
    ).toBe('augusta_king');
    expect(usernameFromSlackUser({ name: 'ada.l', profile: { display_name: '', real_name: '' } })).toBe(
      'ada_l',
    );
  });

  it('falls through to the next name when one gives nothing usable', () => {
    expect(
      usernameFromSlackUser({ name: 'taro', profile: { display_name: '山田太郎', real_name: '山田 太郎' } }),
    ).toBe('taro');
  });

  it('gives nothing when no name is usable', () => {
    expect(usernameFromSlackUser({ name: '山田', profile: { display_name: '🚀' } })).toBeUndefined();
    expect(usernameFromSlackUser({})).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { SYNONYMS } from '../../src/commands/registry.js';
import { damerauLevenshtein, nearestWord } from '../../src/commands/suggest.js';

describe('damerauLevenshtein', () => {
  it.each([
    ['', '', 0],
    ['start', 'start', 0],
    ['strat', 'start', 1],
    ['pols', 'pools', 1],
    ['ca', 'abc', 2],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('%s → %s is %i', (a, b, n) => {
    expect(damerauLevenshtein(a, b)).toBe(n);
    expect(damerauLevenshtein(b, a)).toBe(n);
  });
});

describe('nearestWord', () => {
  const top = ['ls', 'show', 'start', 'stop', 'rm', 'capacity', 'configs', 'create'];
  it('finds near words, aliases and unique prefixes', () => {
    expect(nearestWord('strat', top)).toBe('start');
    expect(nearestWord('STOPP', top)).toBe('stop');
    expect(nearestWord('delete', top, SYNONYMS)).toBe('rm');
    expect(nearestWord('cap', top)).toBe('capacity');
    expect(nearestWord('conf', top)).toBe('configs');
  });

  it('suggests nothing for a known word or one far from all', () => {
    expect(nearestWord('ls', top)).toBeNull();
    expect(nearestWord('xyzzy', top)).toBeNull();
    expect(nearestWord('', top)).toBeNull();
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CELLS, DOORS, renderMatrix, TRICKS } from './matrix.js';

// docs/security.md shows the matrix the security tests run; this keeps the two equal.

describe('the security matrix in docs/security.md', () => {
  it('is the table generated from test/security/matrix.ts (npm run docs:security rewrites it)', () => {
    const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    const start = doc.indexOf('<!-- security-matrix:start');
    const end = doc.indexOf('<!-- security-matrix:end -->');
    expect(start, 'docs/security.md has no <!-- security-matrix:start … --> marker').toBeGreaterThan(0);
    expect(doc.slice(doc.indexOf('\n', start) + 1, end), 'run npm run docs:security').toBe(renderMatrix());
  });

  it('has one cell for every door and trick, each n/a with its reason', () => {
    expect(CELLS).toHaveLength(DOORS.length * TRICKS.length);
    for (const cell of CELLS) {
      if (cell.expected.outcome === 'n/a')
        expect(cell.expected.why.length, `${cell.door} × ${cell.trick}`).toBeGreaterThan(20);
    }
  });
});

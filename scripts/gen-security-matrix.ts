import { readFileSync, writeFileSync } from 'node:fs';
import { renderMatrix } from '../test/security/matrix.js';

// Rewrites the security matrix in docs/security.md (between its markers) from the data the security
// tests run (test/security/matrix.ts). test/security/matrix-doc.test.ts fails while they differ.

const path = new URL('../docs/security.md', import.meta.url);
const START = '<!-- security-matrix:start';
const END = '<!-- security-matrix:end -->';
const doc = readFileSync(path, 'utf8');
const start = doc.indexOf(START);
const end = doc.indexOf(END);
if (start < 0 || end < start) throw new Error('docs/security.md has no security-matrix markers');
const from = doc.indexOf('\n', start) + 1;
writeFileSync(path, `${doc.slice(0, from)}${renderMatrix()}${doc.slice(end)}`);
console.log('docs/security.md: matrix rewritten');

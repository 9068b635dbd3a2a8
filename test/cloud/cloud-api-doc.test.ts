import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderOperationTables } from '../../scripts/gen-cloud-api-doc.js';

describe('docs/cloud-api.md', () => {
  it('lists every operation of every shape exactly as src/cloud/routes.ts has it', () => {
    const doc = readFileSync(new URL('../../docs/cloud-api.md', import.meta.url), 'utf8');
    // Regenerate with: npx tsx scripts/gen-cloud-api-doc.ts
    expect(doc).toContain(renderOperationTables());
  });
});

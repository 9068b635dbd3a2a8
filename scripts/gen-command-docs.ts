import { writeFileSync } from 'node:fs';
import { renderCommandsDoc } from '../src/commands/commands-doc.js';

// Writes docs/commands.md from the command registry; test/commands/commands-doc.test.ts fails when
// the committed file differs.
writeFileSync(new URL('../docs/commands.md', import.meta.url), renderCommandsDoc());
console.log('wrote docs/commands.md');

import { readFileSync, writeFileSync } from 'node:fs';
import { renderCommandsDoc, withShapeTable } from '../src/commands/commands-doc.js';

// Writes docs/commands.md and the README's shape table from the command registry;
// test/commands/commands-doc.test.ts fails when either committed file differs.
writeFileSync(new URL('../docs/commands.md', import.meta.url), renderCommandsDoc());
const readme = new URL('../README.md', import.meta.url);
writeFileSync(readme, withShapeTable(readFileSync(readme, 'utf8')));
console.log('wrote docs/commands.md and the shape table in README.md');

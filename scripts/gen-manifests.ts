// Regenerates manifests/slack-app.*.json from src/slack/app-manifest.ts (npm run manifests).
import { writeFileSync } from 'node:fs';
import { appManifest, scopesTable } from '../src/slack/app-manifest.js';

const write = (file: string, socketMode: boolean) =>
  writeFileSync(
    new URL(`../manifests/${file}`, import.meta.url),
    `${JSON.stringify(appManifest({ socketMode }), null, 2)}\n`,
  );
write('slack-app.http.json', false);
write('slack-app.socket-mode.json', true);
// Each scope with why it is asked for: docs/operations.md holds this table (a test compares them).
process.stdout.write(`${scopesTable()}\n`);

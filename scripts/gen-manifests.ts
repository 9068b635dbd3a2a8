// Regenerates manifests/slack-app.*.json from src/slack/app-manifest.ts, and the Kubernetes kit's
// monitoring component from deploy/ (npm run manifests).
import { writeFileSync } from 'node:fs';
import { appManifest, scopesTable } from '../src/slack/app-manifest.js';
import { monitoringFiles } from './monitoring-objects.js';

const write = (file: string, socketMode: boolean) =>
  writeFileSync(
    new URL(`../manifests/${file}`, import.meta.url),
    `${JSON.stringify(appManifest({ socketMode }), null, 2)}\n`,
  );
write('slack-app.http.json', false);
write('slack-app.socket-mode.json', true);
// The Kubernetes kit's monitoring component, from deploy/prometheus and deploy/grafana.
for (const [file, text] of Object.entries(monitoringFiles())) {
  writeFileSync(new URL(`../deploy/kubernetes/monitoring/${file}`, import.meta.url), text);
}
// Each scope with why it is asked for: docs/operations.md holds this table (a test compares them).
process.stdout.write(`${scopesTable()}\n`);

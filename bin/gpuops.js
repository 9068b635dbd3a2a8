#!/usr/bin/env node
// Runs the TypeScript sources through tsx in a checkout; runs the compiled dist/ in the container,
// which ships no src/. Either way `npx gpuops …` works right after `npm ci`.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli.js', import.meta.url).href);
}

// Bundles the page with esbuild into dist/esbuild/: main.js (the page and mcprt in one ES
// module), index.html, and mcprt.wasm beside them, where mcprt looks by default
// (new URL('./mcprt.wasm', import.meta.url): esbuild keeps import.meta.url, the bundle's
// URL, but does not emit the file itself).
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const outdir = 'dist/esbuild';
mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: ['main.js'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  outdir,
  logLevel: 'warning',
});
copyFileSync('index.html', `${outdir}/index.html`);
// The package exports its .wasm ('mcprt/mcprt.wasm') for exactly this.
copyFileSync(fileURLToPath(import.meta.resolve('mcprt/mcprt.wasm')), `${outdir}/mcprt.wasm`);

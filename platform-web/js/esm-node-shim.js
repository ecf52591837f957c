// --extern-pre-js: runs at the top level of the generated .mjs.
// Emscripten 3.1.6's EXPORT_ES6 output uses require()/__dirname on Node; give it both in
// module scope so the same module loads unchanged in Node 20 and in browsers.
var require, __dirname, __filename;
if (typeof process == 'object' && typeof process.versions == 'object' &&
    typeof process.versions.node == 'string') {
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const { dirname } = await import('node:path');
  require = createRequire(import.meta.url);
  __filename = fileURLToPath(import.meta.url);
  __dirname = dirname(__filename);
}

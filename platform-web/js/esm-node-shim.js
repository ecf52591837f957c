// --extern-pre-js: runs at the top level of the generated .mjs.
// Emscripten 3.1.6's EXPORT_ES6 output uses require()/__dirname on Node; give it both in
// module scope so the same module loads unchanged in Node and in browsers. Node's
// built-ins come from process.getBuiltinModule (Node ≥ 20.16), not from an import: a
// browser bundler (esbuild, vite) would try to resolve `node:*` imports, and an awaited
// import() would make the module (and every bundle of it) use top-level await.
var require, __dirname, __filename;
if (typeof process == 'object' && typeof process.versions == 'object' &&
    typeof process.versions.node == 'string') {
  if (typeof process.getBuiltinModule != 'function') {
    throw new Error('mcprt needs Node.js >= 20.16 (process.getBuiltinModule); this is Node ' +
                    process.versions.node);
  }
  require = process.getBuiltinModule('module').createRequire(import.meta.url);
  __filename = process.getBuiltinModule('url').fileURLToPath(import.meta.url);
  __dirname = process.getBuiltinModule('path').dirname(__filename);
}

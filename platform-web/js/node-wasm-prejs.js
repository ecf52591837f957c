// --pre-js: runs inside the factory before ENVIRONMENT_IS_NODE is known.
// Node 20 has a global fetch, so 3.1.6's loader would try to fetch a file path; read the
// .wasm next to the .mjs from disk instead. (No import.meta here: 3.1.6's terser fails
// on it; _scriptDir is the module URL.)
if (typeof process == 'object' && typeof process.versions == 'object' &&
    typeof process.versions.node == 'string' && !Module['wasmBinary'] &&
    !Module['locateFile'] && !Module['instantiateWasm']) {
  Module['wasmBinary'] = require('fs').readFileSync(new URL(_scriptDir.replace(/\.m?js$/, '.wasm')));
}

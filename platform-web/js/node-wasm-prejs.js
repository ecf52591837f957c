// --pre-js: runs inside the factory before ENVIRONMENT_IS_NODE is known.
// Node has a global fetch, so 3.1.6's loader would try to fetch a file path; read the
// .wasm from disk instead: the file Module.locateFile names (js/index.js's wasmUrl
// option), else the .wasm next to the .mjs. An http(s) URL is left to the loader's fetch.
// (No import.meta here: 3.1.6's terser fails on it; _scriptDir is the module URL.)
if (typeof process == 'object' && typeof process.versions == 'object' &&
    typeof process.versions.node == 'string' && !Module['wasmBinary'] &&
    !Module['instantiateWasm']) {
  var mcprtWasmFile = _scriptDir.replace(/\.m?js$/, '.wasm');
  if (Module['locateFile']) {
    mcprtWasmFile = String(Module['locateFile'](mcprtWasmFile.replace(/^.*\//, ''), ''));
  }
  if (!/^(https?|data|blob):/i.test(mcprtWasmFile)) {
    Module['wasmBinary'] = require('fs').readFileSync(
        /^file:/i.test(mcprtWasmFile) ? new URL(mcprtWasmFile) : mcprtWasmFile);
  }
}

// vite build → dist/vite/; `vite` serves the page for development. Vite sees mcprt's
// `new URL('./mcprt.wasm', import.meta.url)` and emits the .wasm as an asset: nothing
// mcprt-specific to configure. preserveSymlinks: only because this example links mcprt
// from the build tree (a file: dependency is a symlink out of the project, which the dev
// server would refuse to serve); an installed package needs no such line.
export default {
  base: './',
  resolve: { preserveSymlinks: true },
  build: { outDir: 'dist/vite', emptyOutDir: true, target: 'es2022' },
};

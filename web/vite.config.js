import { defineConfig } from 'vite';

// One bundle, no framework plugin: esbuild compiles the JSX for Preact directly.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../internal/webui/dist',
    emptyOutDir: true,
    target: 'es2020',
    assetsDir: 'assets',
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:6632', '/health': 'http://127.0.0.1:6632' },
  },
});

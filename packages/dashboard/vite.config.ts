import { defineConfig } from 'vite';

// Preact's JSX through Vite's own transform (no plugin); served by the API under /dashboard/.
export default defineConfig({
  root: 'app',
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: '../dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 300 },
});

import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `vite` (dev) proxies the APIs to a running all-in-one; `vite build` writes static files to dist/.
const target = process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8787';
const apiPrefixes = [
  '/v1',
  '/v2',
  '/admin',
  '/oauth',
  '/scim',
  '/model-configs',
  '/openapi.json',
  '/.well-known',
];

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1024 },
  server: { proxy: Object.fromEntries(apiPrefixes.map((p) => [p, { target, changeOrigin: false }])) },
});

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves console/dist at `/`; in development, Vite serves the console and forwards every
// gateway path to a gateway on port 3000 (`npm start` in another terminal).
const gateway = 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2048 },
  server: {
    proxy: Object.fromEntries(['/api', '/rest', '/v1', '/pg'].map((prefix) => [prefix, { target: gateway }])),
  },
});

// Builds the Observatory (app/) into dist/app, which `crystal serve` serves at /.
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

export default defineConfig({
  root: 'app',
  plugins: [react()],
  build: { outDir: '../dist/app', emptyOutDir: true, chunkSizeWarningLimit: 1200 },
})

#!/usr/bin/env node
// `node server/index.js --port 8888`: runs the compiled service (npm install builds it).
await import('../dist/server/main.js')

#!/usr/bin/env node
// Entry of the `crystal` and `svc-crystal` commands: runs the compiled CLI (npm install builds it).
import { existsSync } from 'node:fs'

const entry = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write('crystal: the CLI is not built yet; run `npm install` (or `npm run build`) in the package folder\n')
  process.exit(1)
}
// A reader that goes away (`crystal primitives | head`) is not an error: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(0)
    throw e
  })
}
const { main } = await import(entry.href)
process.exitCode = await main(process.argv)

#!/usr/bin/env node
// Entry of the `crystal` and `svc-crystal` commands: runs the compiled CLI (npm install builds it).
import { existsSync } from 'node:fs'
import module from 'node:module'

// Node 22.8 and later keep the compiled modules on disk (NODE_DISABLE_COMPILE_CACHE=1 turns it off): a
// command starts some 20% sooner on Node 24. Node 20 has no such cache.
module.enableCompileCache?.()

// the compiled CLI as chunks (scripts/bundle.mjs): loaded in a third of the compiled tree's time
const entry = new URL('../dist/bundle/main.js', import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write('crystal: the CLI is not built yet; run `npm install` (or `npm run build`) in the package folder\n')
  process.exit(1)
}
const { quietWhenReaderLeaves } = await import(new URL('../dist/bundle/pipes.js', import.meta.url).href)
quietWhenReaderLeaves()
const { main, endsAtOnce } = await import(entry.href)
process.exitCode = await main(process.argv)
if (endsAtOnce?.()) {
  // its output flushed first (a pipe is written asynchronously on some systems), then the end at once
  for (const out of [process.stdout, process.stderr]) await new Promise((flushed) => out.write('', flushed))
  process.exit()
}

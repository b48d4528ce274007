#!/usr/bin/env node
// Entry of the `crystal` and `svc-crystal` commands: runs the compiled CLI (npm install builds it).
import { statSync } from 'node:fs'
import module from 'node:module'

// Node 22.8 and later keep the compiled modules on disk (NODE_DISABLE_COMPILE_CACHE=1 turns it off): a
// command starts some 20% sooner on Node 24. Node 20 has no such cache.
module.enableCompileCache?.()

// The compiled CLI as chunks (scripts/bundle.mjs, loaded in a third of the compiled tree's time), unless
// tsc compiled the tree again after they were made (a build by tsc alone): then the tree as compiled.
const modified = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1
const [chunks, tree] = ['bundle', 'cli'].map((dir) => modified(new URL(`../dist/${dir}/main.js`, import.meta.url)))
if (chunks < 0 && tree < 0) {
  process.stderr.write('crystal: the CLI is not built yet; run `npm install` (or `npm run build`) in the package folder\n')
  process.exit(1)
}
const dir = new URL(chunks >= tree ? '../dist/bundle/' : '../dist/cli/', import.meta.url)
const { quietWhenReaderLeaves } = await import(new URL('pipes.js', dir).href)
quietWhenReaderLeaves()
const { main, endsAtOnce } = await import(new URL('main.js', dir).href)
process.exitCode = await main(process.argv)
if (endsAtOnce?.()) {
  // its output flushed first (a pipe is written asynchronously on some systems), then the end at once
  for (const out of [process.stdout, process.stderr]) await new Promise((flushed) => out.write('', flushed))
  process.exit()
}

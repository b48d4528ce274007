#!/usr/bin/env node
// Build step after tsc: the CLI as ES module chunks in dist/bundle/ (bin/crystal.js runs it). Node
// loads the compiled tree as some 400 files (TypeBox alone is 249), 0.15 s of a command's start on
// the 2-core machine; as chunks it loads in about a third of that (docs/gpu.md, "A command's
// start"). A command's own modules are imported when it runs, so they split into chunks of their own.
//
// Each worker (a file a Worker is started from, named beside the module that starts it) is an entry
// of the same build, so `new URL('./x_worker.js', import.meta.url)` finds it beside the chunk that
// asks. dist/bundle/ is one folder below dist/ as dist/server/ and dist/bench/ are, so their other
// relative URLs (the Observatory's ../app/, bin/) name the same files.
import { rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'dist/bundle')
const WORKERS = [
  'engine/discovery/detect_worker',
  'server/crystal/evolve_worker',
  'server/crystal/run_worker',
  'server/markets/writer_worker',
  'server/station/perception_worker',
  'bench/search_run',
]
/** Entries whose start is timed (a command's, evolve's detection workers'). */
const STARTS = ['main', 'pipes', 'detect_worker']

/** A bare import's package name (`@scope/name` or `name`). */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/** The build, with the packages not in `bundled` left to node_modules (every package when `bundled` is undefined). */
function bundle(bundled, write = true) {
  return build({
    entryPoints: Object.fromEntries(['cli/main', 'cli/pipes', ...WORKERS].map((p) => [p.split('/').pop(), join(ROOT, `dist/${p}.js`)])),
    outdir: OUT,
    absWorkingDir: ROOT,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // the native binding and the bench-only dev dependencies stay packages of their own
    external: ['webgpu', 'playwright-core', 'autocannon'],
    plugins: bundled
      ? [
          {
            name: 'node-modules',
            setup: (b) =>
              b.onResolve({ filter: /^[^./]/ }, (a) => (bundled.has(packageOf(a.path)) ? undefined : { path: a.path, external: true })),
          },
        ]
      : [],
    // CommonJS dependencies require Node's modules: an ES module has no require of its own
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    metafile: true,
    // maps to the TypeScript (through tsc's): `node --enable-source-maps bin/crystal.js` names it in stack traces
    sourcemap: write,
    write,
    legalComments: 'none',
    logLevel: 'warning',
  })
}

/**
 * The packages a start loads: those in the chunks its entries import statically. Only they are
 * bundled; the others (the server's, the station's), imported when a command runs, load from
 * node_modules as they are, so the package holds no second copy of them.
 */
function packagesAtStart({ outputs }) {
  const seen = new Set()
  const visit = (file) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const i of outputs[file].imports) if (i.kind === 'import-statement' && !i.external) visit(i.path)
  }
  // the metafile names outputs from the working folder (ROOT), with forward slashes on every system
  for (const entry of STARTS) visit(`dist/bundle/${entry}.js`)
  const packages = new Set()
  for (const file of seen)
    for (const input of Object.keys(outputs[file].inputs)) {
      const at = input.lastIndexOf('node_modules/')
      if (at >= 0) packages.add(packageOf(input.slice(at + 'node_modules/'.length)))
    }
  return packages
}

const { metafile } = await bundle(undefined, false)
rmSync(OUT, { recursive: true, force: true })
const { outputs } = (await bundle(packagesAtStart(metafile))).metafile
// which compiled modules (dist/...) and packages each chunk holds: what a command loaded, in the tree's names (cli/main.test.ts)
const held = Object.entries(outputs)
  .filter(([file]) => file.endsWith('.js'))
  .map(([file, o]) => [
    file.slice('dist/bundle/'.length),
    Object.keys(o.inputs).map((input) => input.replace(/^.*?(node_modules|dist)\//, '')),
  ])
writeFileSync(join(OUT, 'chunks.json'), `${JSON.stringify(Object.fromEntries(held))}\n`)

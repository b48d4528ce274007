// Prints the node_modules folders the packed project needs on the device machine: the runtime
// dependencies' closure, and with --tests vitest's and the test files' own imports too. Dawn's other
// platforms are left to the caller's excludes. Run from the repository root.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const tests = process.argv.includes('--tests')
const root = process.cwd()
const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
// the devDependencies that test files import (the rest are compilers, linters and the UI's build)
const testRoots = [
  'vitest',
  'fast-check',
  '@nats-io/nats-core',
  '@nats-io/nkeys',
  '@breezystack/lamejs',
  '@apidevtools/swagger-parser',
  'comlink',
]
const roots = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}), ...(tests ? testRoots : [])]

const seen = new Set()
// node's lookup: the package's own node_modules, then each folder above it up to the root's
function find(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dir === root || dir === dirname(dir)) return undefined
  }
}
function walk(name, from, optional) {
  const dir = find(name, from)
  if (!dir) {
    if (!optional) throw new Error(`closure: ${name} (needed from ${relative(root, from) || '.'}) is not installed`)
    return
  }
  if (seen.has(dir)) return
  seen.add(dir)
  const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  for (const dep of Object.keys(p.dependencies ?? {})) walk(dep, dir, false)
  for (const dep of Object.keys(p.optionalDependencies ?? {})) walk(dep, dir, true)
  for (const dep of Object.keys(p.peerDependencies ?? {})) walk(dep, dir, true)
}
for (const name of roots) walk(name, root, pkg.optionalDependencies?.[name] !== undefined)
for (const dir of [...seen].sort()) console.log(relative(root, dir))

#!/usr/bin/env node
// `npm run prepare`: the build (`npm run build`), unless the one in dist/ is current. npm runs a
// package's `prepare` on `npm install`, and, in the package's own folder, before every `npx crystal`
// (npm exec installs the folder into its cache as a directory spec, and that runs `prepare`): a full
// build there took 18.9 s of `npx crystal --version`, where the command itself takes 0.3 s.
// Current means: every output the commands load is there, and no source, setting or installed
// dependency (node_modules/.package-lock.json) changed since the last build this script made began
// (dist/.built). `npm run build` always builds.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The folders and files the build reads. */
const SOURCES = ['app', 'bench', 'bin', 'cli', 'e2e', 'engine', 'materials', 'scripts', 'server', 'shaders', 'testing']
const SETTINGS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'vite.config.ts',
  'node_modules/.package-lock.json',
]
/** What the commands load: a build that stopped halfway lacks one. */
const OUTPUTS = ['dist/bundle/main.js', 'dist/cli/main.js', 'dist/server/app.js', 'dist/app/index.html']
/** Below the sources, what the build and the tests write (ignored by git): not a change of source. */
const WRITTEN = new Set(['results', 'screenshots', 'node_modules'])
export const STAMP = 'dist/.built'

/**
 * The latest modification of a file under `path`; 0 where there is none. Folders' own times are not
 * read: creating a generated file or a result dates its folder. A source removed is seen in the
 * sources that imported it, which must change too.
 */
function latest(path) {
  const s = statSync(path, { throwIfNoEntry: false })
  if (!s) return 0
  if (!s.isDirectory()) return s.mtimeMs
  let t = 0
  for (const name of readdirSync(path)) if (!WRITTEN.has(name) && !name.endsWith('.gen.ts')) t = Math.max(t, latest(join(path, name)))
  return t
}

/** Whether the build in `root`'s dist/ is current: its outputs there, nothing it reads changed since its stamp. */
export function buildIsCurrent(root) {
  const stamp = statSync(join(root, STAMP), { throwIfNoEntry: false })
  if (!stamp || !OUTPUTS.every((f) => existsSync(join(root, f)))) return false
  return [...SOURCES, ...SETTINGS].every((p) => latest(join(root, p)) < stamp.mtimeMs)
}

/** Builds `root` with npm (the one running this script where npm runs it) and stamps the build with the moment it began. */
function build(root) {
  const began = new Date()
  const npm = process.env.npm_execpath
  const r = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) return r.status ?? 1
  writeFileSync(join(root, STAMP), `${began.toISOString()}\n`)
  utimesSync(join(root, STAMP), began, began)
  return 0
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  if (buildIsCurrent(root))
    process.stdout.write(`resonant-crystal: the build in dist/ is current (${STAMP}); npm run build builds it again\n`)
  else process.exitCode = build(root)
}

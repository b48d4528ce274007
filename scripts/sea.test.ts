// The Linux x64 single executable as a user gets it: built and archived by scripts/sea/build.mjs,
// checked against its .sha256, unpacked where no node_modules exist, and run: materials, run, evolve, serve.
// The build takes about a minute on 2 cores, so it runs under `npm run release:test` (and the release workflow).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')
const run = promisify(execFile)
let out: string
let archive: string
let home: string
let dir: string
let dataDir: string

/** The executable with its own data dir; stdout as text. */
async function crystal(...args: string[]): Promise<string> {
  const { stdout } = await run(join(dir, 'crystal'), args, { env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir }, cwd: home })
  return stdout
}

describe.skipIf(!process.env.CRYSTAL_RELEASE_TEST)('the linux-x64 single executable (npm run release:test)', () => {
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'crystal-sea-'))
    execFileSync(process.execPath, [join(ROOT, 'scripts/sea/build.mjs'), '--targets', 'linux-x64', '--out', out], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    archive = readdirSync(out).find((f) => f.endsWith('-linux-x64.tar.gz'))!
    // unpacked far from the repository: nothing to find but what the archive holds
    home = mkdtempSync(join(tmpdir(), 'crystal-home-'))
    execFileSync('tar', ['xzf', join(out, archive), '-C', home])
    dir = join(home, archive.replace(/\.tar\.gz$/, ''))
    dataDir = join(home, 'data')
  }, 300_000)

  afterAll(() => {
    for (const d of [out, home]) if (d) rmSync(d, { recursive: true, force: true })
  })

  it('the archive has a .sha256 file that sha256sum -c accepts', () => {
    expect(execFileSync('sha256sum', ['-c', `${archive}.sha256`], { cwd: out, encoding: 'utf8' })).toBe(`${archive}: OK\n`)
  })

  it('holds the executable, the plugin name, dawn.node and the Observatory, and no node_modules', () => {
    const files = execFileSync('tar', ['tzf', join(out, archive)], { encoding: 'utf8' }).split('\n')
    expect(files.some((f) => f.includes('node_modules'))).toBe(false)
    for (const f of [
      'crystal',
      'svc-crystal',
      'lib/webgpu/dist/linux-x64/dawn.node',
      'lib/app/index.html',
      'lib/server/crystal/evolve_worker.js',
      'lib/server/crystal/run_worker.js',
      'lib/engine/discovery/detect_worker.js',
    ]) {
      expect(existsSync(join(dir, f)), f).toBe(true)
    }
  })

  it('svc-crystal is found on PATH, as a main svc tool finds its plugins, and prints the version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const { stdout } = await run('svc-crystal', ['--version'], { env: { ...process.env, PATH: [dir, process.env.PATH].join(delimiter) } })
    expect(stdout.trim()).toBe(version)
  })

  it('materials lists the eight built-ins', async () => {
    const materials = JSON.parse(await crystal('materials', '--json'))
    expect(materials.map((m: { name: string }) => m.name)).toContain('europium_crystal')
    expect(materials).toHaveLength(8)
  })

  it('runs an example .crystal file shipped beside it', async () => {
    const result = JSON.parse(await crystal('run', join(dir, 'examples/recall-demo.crystal'), '--json'))
    const commands = result.trace.map((e: { command: string }) => e.command)
    expect(commands).toEqual(expect.arrayContaining(['WRITE', 'RESONATE', 'RECALL', 'DREAM']))
    expect(result.trace.find((e: { command: string }) => e.command === 'RESONATE').result.energy).toBeGreaterThan(0)
  })

  it('evolve registers primitives into the data dir', async () => {
    const result = JSON.parse(
      await crystal('evolve', '--material', 'ideal_resonator', '--generations', '2', '--population', '6', '--size', '48', '--json'),
    )
    expect(result.registered.length).toBeGreaterThan(0)
    expect(existsSync(join(dataDir, 'registry.json'))).toBe(true)
  })

  it('serve answers GET / with the Observatory and /materials with the materials', async () => {
    const server: ChildProcess = spawn(join(dir, 'crystal'), ['serve', '--port', '0'], {
      env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir },
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      const url = await new Promise<string>((ok, fail) => {
        server.on('exit', (code) => fail(new Error(`serve exited with ${code}`)))
        for (const s of [server.stdout!, server.stderr!])
          createInterface({ input: s }).on(
            'line',
            (l) => l.match(/listening on (http:\/\/\S+)/) && ok(l.match(/listening on (http:\/\/\S+)/)![1]),
          )
      })
      const page = await fetch(url + '/')
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<script')
      const materials = await fetch(url + '/materials')
      expect(materials.status).toBe(200)
      expect(await materials.json()).toHaveLength(8)
    } finally {
      server.kill('SIGTERM')
    }
  })
})

// The package as others get it: `npm pack`ed, installed from the tarball into an empty project, and
// an example of each entry run there (Node, types, a browser bundle in Chromium); the plugin on PATH.
import { execFile, execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launch } from '../e2e/browser.js'
import { SUBJECTS } from '../engine/contracts/swarm.js'

const ROOT = join(import.meta.dirname, '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
const run = promisify(execFile)
let project: string

/** Runs an example with the installed project's node_modules; its one line of JSON parsed. */
async function example(file: string): Promise<any> {
  const { stdout } = await run(process.execPath, [file], { cwd: project })
  return JSON.parse(stdout)
}

beforeAll(() => {
  // the suite builds first (`npm test`); packing with --ignore-scripts keeps that build, not a second one
  if (!existsSync(join(ROOT, 'dist/engine/index.d.ts'))) throw new Error('dist/ is not built: run `npm run build` first')
  project = mkdtempSync(join(tmpdir(), 'crystal-pack-'))
  const [{ filename }] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  )
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  cpSync(join(ROOT, 'scripts/package-examples'), project, { recursive: true })
  // the dependencies come from npm's cache when they are there (the repo's own install filled it)
  execFileSync('npm', ['install', join(project, filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: project,
    stdio: 'ignore',
  })
})

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true })
})

describe('the package installed from its tarball', () => {
  it('the main entry runs the engine in Node: a text written and stepped holds energy and is recalled by one of its words, and the built-in materials load', async () => {
    const out = await example('node.mjs')
    expect(out).toMatchObject({ backend: 'cpu', step: 100, materials: 8 })
    expect(out.energy).toBeGreaterThan(0)
    // one memory in a lossless medium: a word of it finds it in the field
    expect(out.top).toBe('cold glyph')
  })

  it('the contracts entry accepts a valid bus message, names the wrong field of a bad one, and refuses a bad material', async () => {
    expect(await example('contracts.mjs')).toEqual({ valid: null, invalid: expect.stringContaining('/order'), refused: 'bad_material' })
  })

  it('the consciousness entry synchronizes strongly coupled Kuramoto oscillators and reports phi', async () => {
    const out = await example('consciousness.mjs')
    expect(out.before).toBeLessThan(0.1)
    expect(out.after).toBeGreaterThan(0.9)
    expect(out.phi).toBeGreaterThanOrEqual(0)
    expect(typeof out.level).toBe('string')
  })

  it('the entries carry types: a consumer type-checks under NodeNext and wrong calls are caught', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['consumer.ts'],
      }),
    )
    // unused @ts-expect-error lines fail this, so a type that fell back to `any` (GPU included) would not pass
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project])
  })

  it('only the entries are importable: a deep path into dist/ is closed', async () => {
    const deep = run(process.execPath, ['--input-type=module', '-e', "await import('resonant-crystal/dist/engine/node.js')"], {
      cwd: project,
    })
    await expect(deep).rejects.toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/)
  })

  it('bundled for the browser condition, the engine runs in Chromium on the CPU and on WebGPU to the same energy', async () => {
    const built = await build({
      entryPoints: [join(project, 'browser.mjs')],
      absWorkingDir: project,
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
      logLevel: 'silent',
    })
    const bundle = built.outputFiles[0].contents
    // no Node built-in may reach a browser bundle
    expect(built.outputFiles[0].text).not.toMatch(/require\("node:/)
    // WebGPU needs a secure context: a page from 127.0.0.1, not about:blank
    const server: Server = createServer((req, res) => {
      res.setHeader('content-type', req.url === '/example.js' ? 'text/javascript' : 'text/html')
      res.end(req.url === '/example.js' ? bundle : '<!doctype html><script src="/example.js"></script>')
    })
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
    const browser = await launch()
    try {
      const page = await browser.newPage()
      await page.goto(`http://127.0.0.1:${(server.address() as { port: number }).port}/`)
      const out = await page.evaluate(() => (globalThis as any).example)
      expect(out.cpu.backend).toBe('cpu')
      expect(out.gpu.backend).toBe('gpu')
      expect(out.cpu.energy).toBeGreaterThan(0)
      // the WGSL kernel and its CPU twin agree to float32 rounding over 50 steps
      expect(Math.abs(out.gpu.energy - out.cpu.energy) / out.cpu.energy).toBeLessThan(1e-5)
      // the browser entry exports the swarm's bus contract, every subject of it
      expect(out.subjects).toBe(Object.keys(SUBJECTS).length)
    } finally {
      await browser.close()
      server.close()
    }
  })

  it('svc-crystal is found on PATH, as a main svc tool finds its plugins, and prints the version', async () => {
    const PATH = [join(project, 'node_modules/.bin'), process.env.PATH].join(delimiter)
    const { stdout } = await run('svc-crystal', ['--version'], { env: { ...process.env, PATH } })
    expect(stdout.trim()).toBe(pkg.version)
  })
})

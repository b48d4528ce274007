// "This tab" mode in a real browser: the engine runs in the page's worker on its WebGPU (SwiftShader here), its
// field matches the server's for the same seed and program, and what it discovers is registered in
// the server's registry.
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { autoBackend, softwareGpu } from '../testing/backends.js'
import { call, startServer, type RunningServer } from '../testing/services.js'
import { openObservatory } from './browser.js'

const SHOTS = new URL('./screenshots/', import.meta.url).pathname
let server: RunningServer
let browser: Browser
let page: Page
const consoleErrors: string[] = []
const status = () => page.getByTestId('status').textContent()
const mode = () => page.getByTestId('mode').textContent()

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  server = await startServer(['--size', '48', '--material', 'europium_crystal', '--seed', '1'])
  ;({ browser, page } = await openObservatory(server.url, consoleErrors))
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe('This tab mode', () => {
  test('switches to an engine in the tab, on its WebGPU; the switch always shows which', async () => {
    await expect.poll(mode).toBe(`Server · ${await autoBackend()} · europium_crystal · N = 48`)
    await page.getByRole('button', { name: 'This tab' }).click()
    // SwiftShader where that is this machine's only adapter; elsewhere any name (Linux Chromium may still
    // give WebGPU SwiftShader where there is a GPU, unless started with --enable-features=Vulkan)
    const adapter = (await softwareGpu()) ? '.*swiftshader.*' : '.+'
    await expect
      .poll(mode, { timeout: 30_000 })
      .toMatch(
        new RegExp(
          `^This tab · gpu backend: asked for \\(${adapter}\\) · carried from the server at step 0 · gpu · europium_crystal · N = 48$`,
          'i',
        ),
      )
    expect(await page.getByRole('button', { name: 'This tab' }).getAttribute('aria-pressed')).toBe('true')
    await expect.poll(status).toMatch(/^step 0 · 0 memories/)
  })

  test("the tab's field matches the server's for the same seed and program", async () => {
    // the program, through the controls in the tab ...
    await page.getByLabel('text').fill('the cold glyph remembers')
    await page.getByRole('button', { name: 'Write' }).click()
    await expect.poll(status).toMatch(/ · 1 memory · /)
    await page.getByLabel('steps').fill('120')
    await page.getByRole('button', { name: 'Resonate' }).click()
    await expect.poll(status, { timeout: 60_000 }).toMatch(/^step 120 · /)
    // ... and on the server
    await call(server.url, 'POST', '/crystal/write', { text: 'the cold glyph remembers', importance: 1 })
    await call(server.url, 'POST', '/crystal/step', { steps: 120 })
    const theirs = (await call(server.url, 'GET', '/crystal/state?size=48')).body.field as number[]
    const ours = (await page.evaluate(() => (window as any).__observatory.state().field)) as number[]
    expect(ours).toHaveLength(48 * 48)
    const peak = Math.max(...ours.map(Math.abs))
    expect(peak).toBeGreaterThan(0.01)
    // the server's state JSON rounds to 5 decimals; the kernels agree far closer than that
    expect(Math.max(...ours.map((v, i) => Math.abs(v - theirs[i])))).toBeLessThan(1e-4)
    await page.screenshot({ path: SHOTS + 'this-tab.png' })
  })

  test("the tab's discoveries are registered in the server's registry", async () => {
    const before = (await call(server.url, 'GET', '/primitives?limit=1')).body.total
    await page.locator('select[name="evolve-material"]').selectOption('optical_cavity')
    await page.getByLabel('generations').fill('1')
    await page.getByLabel('population').fill('4')
    await page.locator('input[name="evolve-size"]').fill('24')
    await page.getByRole('button', { name: 'Evolve' }).click()
    const registered = page.getByTestId('evolve-registered')
    await registered.waitFor({ timeout: 90_000 })
    const ids = ((await registered.textContent()) ?? '').split(' ').filter((x) => x.startsWith('CRY-'))
    expect(ids.length).toBeGreaterThan(0)
    for (const id of ids) expect((await call(server.url, 'GET', `/primitives/${id}`)).body.material).toBe('optical_cavity')
    expect((await call(server.url, 'GET', '/primitives?limit=1')).body.total).toBe(before + ids.length)
  })

  test('the CPU twin runs in the tab too (WebAssembly on shared memory: the server sends cross-origin isolation)', async () => {
    await page.locator('select[name="tab-backend"]').selectOption('cpu')
    // the field comes along (docs/observatory.md)
    await expect
      .poll(mode, { timeout: 30_000 })
      .toMatch(/^This tab · cpu backend: asked for \(WebAssembly SIMD, 1 thread\) · carried over from WebGPU at step 120 · cpu · /)
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true)
    await page.getByLabel('steps').fill('50')
    await page.getByRole('button', { name: 'Resonate' }).click()
    await expect.poll(status).toMatch(/^step 170 · 1 memory · /)
    await page.locator('select[name="tab-backend"]').selectOption('gpu')
    await expect.poll(mode, { timeout: 30_000 }).toMatch(/carried over from the CPU twin at step 170/)
  })

  test('back to the server (asked first: the tab holds a field)', async () => {
    page.once('dialog', (d) => d.accept())
    await page.getByRole('button', { name: 'Server' }).click()
    await expect.poll(mode).toBe(`Server · ${await autoBackend()} · europium_crystal · N = 48`)
    await expect.poll(status).toMatch(/^step 120 · 1 memory · /)
  })

  test('no console errors', () => {
    expect(consoleErrors).toEqual([])
  })
})

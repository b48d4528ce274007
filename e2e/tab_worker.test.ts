// This tab's engine lives in a worker: switching from the server carries the server's field into the
// tab (recall there finds what the server was told), the page keeps drawing and answering clicks while
// the tab's engine works, and Stop still stops a Resonate.
import { describe, expect, test } from 'vitest'
import { call } from '../testing/services.js'
import { withObservatory } from './browser.js'

const o = withObservatory(['--size', '64', '--material', 'europium_crystal', '--seed', '1'])
const status = () => o.page.getByTestId('status').textContent()
const mode = () => o.page.getByTestId('mode').textContent()

/** Starts noting the times of the page's animation frames and of its clicks, on the page's own thread (once). */
const watchThePage = () =>
  o.page.evaluate(() => {
    const w = window as unknown as { __frames?: number[]; __clicks: number[] }
    if (w.__frames) return
    w.__frames = []
    w.__clicks = []
    const frame = (t: number) => (w.__frames!.push(t), requestAnimationFrame(frame))
    requestAnimationFrame(frame)
    document.addEventListener('click', () => w.__clicks.push(performance.now()), true)
  })
const seen = () =>
  o.page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __clicks: number[] }
    return { frames: [...w.__frames], clicks: [...w.__clicks], now: performance.now() }
  })

describe("This tab's engine in a worker", () => {
  test("Server -> This tab carries the server's field: the same field, step and memories; recall in the tab finds the text", async () => {
    await expect.poll(mode).toMatch(/^Server · /)
    await call(o.server.url, 'POST', '/crystal/write', { text: 'the amber lattice hums', importance: 1 })
    await call(o.server.url, 'POST', '/crystal/step', { steps: 40 })
    await o.page.getByRole('button', { name: 'This tab' }).click()
    await expect
      .poll(mode, { timeout: 60_000 })
      .toMatch(/^This tab · gpu backend: .* · carried from the server at step 40 · gpu · europium_crystal · N = 64$/)
    await expect.poll(status).toMatch(/^step 40 · 1 memory · /)
    const theirs = (await call(o.server.url, 'GET', '/crystal/state?size=64')).body.field as number[]
    const ours = (await o.page.evaluate(() => (window as any).__observatory.state().field)) as number[]
    expect(Math.max(...ours.map(Math.abs))).toBeGreaterThan(0.01)
    expect(Math.max(...ours.map((v, i) => Math.abs(v - theirs[i])))).toBeLessThan(1e-4)
    // recall runs in the tab: the server is moved on first, so an answer from it would say step 41
    await call(o.server.url, 'POST', '/crystal/step', { steps: 1 })
    await o.page.locator('input[name="query"]').fill('the amber lattice hums')
    await o.page.getByRole('button', { name: 'Recall' }).click()
    await expect.poll(() => o.page.getByTestId('recall-result').textContent(), { timeout: 60_000 }).toContain('the amber lattice hums')
    await o.page.screenshot({ path: o.shots + 'this-tab-from-server.png' })
  })

  test('while the tab resonates (CPU twin), the page draws frames and handles a click; Stop stops it', async () => {
    await o.page.locator('select[name="tab-backend"]').selectOption('cpu')
    await expect.poll(mode, { timeout: 60_000 }).toMatch(/carried over from WebGPU at step 40 · cpu · /)
    // the CPU twin's shared memory needs cross-origin isolation in the worker too (the server's headers on its script)
    // the WebGPU engine's worker was ended by the switch; Playwright lists it until its close event comes
    await expect.poll(() => o.page.workers().length).toBe(1)
    expect(await o.page.workers()[0].evaluate(() => crossOriginIsolated)).toBe(true)
    await watchThePage()
    await o.page.getByLabel('steps').fill('10000000')
    await o.page.getByRole('button', { name: 'Resonate' }).click()
    const started = await seen()
    await expect.poll(async () => (await seen()).frames.length - started.frames.length, { timeout: 60_000 }).toBeGreaterThan(20)
    expect(await o.page.getByRole('button', { name: 'Resonate' }).isDisabled()).toBe(true) // still under way
    await o.page.getByRole('button', { name: 'Stop' }).click()
    await expect.poll(() => o.page.getByTestId('resonate-progress').textContent(), { timeout: 30_000 }).toMatch(/ · stopped$/)
    const stoppedAt = await status()
    expect(stoppedAt).not.toMatch(/^step 10000040 /)
    await o.page.waitForTimeout(500)
    expect(await status()).toBe(stoppedAt)
  })

  test("an evolve in the tab leaves the page drawing: no frame gap near those of the engine on the page's thread (2.0 to 3.7 s), and it registers", async () => {
    await watchThePage()
    await o.page.locator('select[name="evolve-material"]').selectOption('optical_cavity')
    await o.page.getByLabel('generations').fill('1')
    await o.page.getByLabel('population').fill('32')
    await o.page.locator('input[name="evolve-size"]').fill('128')
    const before = (await call(o.server.url, 'GET', '/primitives?limit=1')).body.total
    const start = (await seen()).now
    await o.page.getByRole('button', { name: 'Evolve' }).click()
    // a click on another view while the evolve runs is handled at once, and back
    await o.page.getByRole('tab', { name: 'Primitives' }).click()
    await o.page.getByRole('tab', { name: 'Observatory' }).click()
    const registered = o.page.getByTestId('evolve-registered')
    await registered.waitFor({ timeout: 180_000 })
    const { frames, clicks, now } = await seen()
    const during = frames.filter((t) => t > start && t < now)
    const gap = Math.max(...during.slice(1).map((t, i) => t - during[i]))
    // with the engine on the page's thread this evolve held the page for 2.0 to 3.7 s at a time (this
    // test failed there); in the worker the page's longest wait was 0.2 s (docs/observatory.md)
    expect(gap).toBeLessThan(1500)
    expect(clicks.filter((t) => t > start && t < now)).toHaveLength(3)
    const ids = ((await registered.textContent()) ?? '').split(' ').filter((x) => x.startsWith('CRY-'))
    expect(ids.length).toBeGreaterThan(0)
    expect((await call(o.server.url, 'GET', '/primitives?limit=1')).body.total).toBe(before + ids.length)
  }, 240_000)

  test('no console errors', () => {
    expect(o.consoleErrors).toEqual([])
  })
})

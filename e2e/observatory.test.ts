// The Observatory in a real browser against a real server: each control works end to end and the
// view reflects it; errors appear beside their control; the controls work from the keyboard; no
// console errors. Screenshots go to e2e/screenshots/.
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startServer, type RunningServer } from '../server/testing.js'
import { openObservatory } from './browser.js'

const SHOTS = new URL('./screenshots/', import.meta.url).pathname
let server: RunningServer
let browser: Browser
let page: Page
const consoleErrors: string[] = []

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  server = await startServer(['--size', '64', '--material', 'europium_crystal'])
  ;({ browser, page } = await openObservatory(server.url, consoleErrors))
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const status = () => page.getByTestId('status').textContent()

describe('the Observatory, server mode', () => {
  test('opens on the live field, connected to the server', async () => {
    await expect.poll(status).toMatch(/^step 0 · 0 memories · energy/)
    expect(await page.getByTestId('mode').textContent()).toMatch(/^Server · cpu · europium_crystal · N = 64$/)
    expect(await page.title()).toBe('Resonant Crystal Observatory')
  })

  test('WRITE puts a memory into the field; a click on the field places a pulse', async () => {
    await page.getByLabel('text').fill('the cold glyph remembers')
    await page.getByRole('button', { name: 'Write' }).click()
    await expect.poll(status).toMatch(/0 · 1 memory · /)
    const before = await status()
    await page.getByTestId('field').click({ position: { x: 300, y: 200 } })
    await expect.poll(status).not.toBe(before) // the energy changed
    await page.screenshot({ path: SHOTS + 'observatory-written.png' })
  })

  test('RESONATE advances the field and the timeline grows, with values under the pointer', async () => {
    await page.getByLabel('steps').fill('300')
    await page.getByRole('button', { name: 'Resonate' }).click()
    await expect.poll(status).toMatch(/^step 300 · /)
    await expect.poll(() => page.locator('[data-testid="timeline-chart"] path').count()).toBe(3)
    await page.locator('.timeline svg').scrollIntoViewIfNeeded()
    const box = (await page.locator('.timeline svg').boundingBox())!
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2)
    await expect.poll(() => page.getByTestId('timeline-chart-values').textContent()).toMatch(/^step \d+: energy [\d.e+-]+/)
  })

  test('DREAM shows its report', async () => {
    await page.getByRole('button', { name: 'Dream deep' }).click()
    const report = page.getByTestId('dream-report')
    await report.waitFor()
    expect(await report.textContent()).toMatch(/modedeepenergy[\d.]+ → [\d.]+pruned\d+%amplified\d+%kicks\d+/)
    await page.screenshot({ path: SHOTS + 'observatory-dreamed.png' })
  })

  test('a server error appears beside the control that caused it, in words', async () => {
    await page.getByLabel('steps').fill('500000')
    await page.getByRole('button', { name: 'Resonate' }).click()
    const error = page.locator('#resonate-error')
    await error.waitFor()
    expect(await error.textContent()).toBe('steps is 500000, over the limit of 100000 (steps_per_request)')
    expect(await page.locator('#write-error').count()).toBe(0)
  })

  test('the controls work from the keyboard', async () => {
    await page.getByLabel('text').focus()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('typed without a mouse')
    await page.keyboard.press('Enter') // submits the Write form
    await expect.poll(status).toMatch(/ · 2 memories/)
    const before = Number((await status())!.match(/^step (\d+)/)![1])
    await page.getByLabel('steps').focus()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('10')
    await page.keyboard.press('Tab') // to the Resonate button
    await page.keyboard.press('Enter')
    await expect.poll(status).toMatch(new RegExp(`^step ${before + 10} · `))
    // a pulse placed by coordinates, from the keyboard
    const energy = await status()
    await page.locator('input[name="pulse-x"]').focus()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('0.25')
    await page.keyboard.press('Enter')
    await expect.poll(status).not.toBe(energy)
    await page.locator('input[name="pulse-x"]').fill('7')
    await page.getByRole('button', { name: 'Pulse' }).click()
    await expect.poll(() => page.locator('#pulse-error').textContent()).toBe('body/x must be <= 1')
  })

  test('the conditions change the material and temperature of the field', async () => {
    await page.locator('select[name="material"]').selectOption('silicon')
    await page.getByLabel('temperature (K)').fill('77')
    await page.getByRole('button', { name: 'Apply' }).click()
    await expect.poll(() => page.getByTestId('mode').textContent()).toMatch(/· silicon ·/)
  })

  test('EVOLVE runs on the server with live progress, and says what it registered', async () => {
    await page.locator('select[name="evolve-material"]').selectOption('vacuum')
    await page.getByLabel('generations').fill('2')
    await page.getByLabel('population').fill('4')
    await page.locator('input[name="evolve-size"]').fill('32')
    await page.getByRole('button', { name: 'Evolve' }).click()
    const registered = page.getByTestId('evolve-registered')
    await registered.waitFor({ timeout: 60_000 })
    expect(await registered.textContent()).toMatch(/^(CRY-\d{6}( CRY-\d{6})*|nothing new)$/)
    expect(await page.getByTestId('evolve-progress').textContent()).toMatch(/^done · best fitness [\d.]+ · registered \d+/)
    expect(await page.getByTestId('evolve-progress').textContent()).toMatch(/QD-score [\d.]+ · coverage [\d.]+% \(\d+ cells\)/)
    // the QD curve and the best and mean fitness, two generations each
    expect(await page.locator('[data-testid="evolve-qd"] path').count()).toBe(1)
    expect(await page.locator('[data-testid="evolve-fitness"] path').count()).toBe(2)
    // and they are in the primitive browser
    const ids = ((await registered.textContent()) ?? '').split(' ').filter((x) => x.startsWith('CRY-'))
    await page.getByRole('tab', { name: 'Primitives' }).click()
    for (const id of ids) await page.getByRole('button', { name: id, exact: true }).waitFor()
    await page.getByRole('tab', { name: 'Observatory' }).click()
  })

  test('the program editor runs a .crystal program and shows its trace; errors come with line and column', async () => {
    await page.getByRole('button', { name: 'Run' }).click()
    const trace = page.getByTestId('program-trace')
    await trace.waitFor()
    expect(await trace.textContent()).toMatch(/^2 {2}material europium_crystal[\s\S]*probe "the cold glyph remembers": resonance/)
    await page.getByLabel('program').fill('PULSE 0.5\nMATERIAL unobtainium')
    await page.getByRole('button', { name: 'Run' }).click()
    const errors = page.getByTestId('program-errors')
    await errors.waitFor()
    expect(await errors.locator('li').allTextContents()).toEqual([
      'line 1, column 1: PULSE takes 2 to 6 arguments, got 1 (PULSE x y [radius] [amplitude] [frequency] [phase])',
      expect.stringMatching(/^line 2, column 10: unknown material "unobtainium"/),
    ])
    expect(await page.locator('#run-error').textContent()).toBe('the program has 2 errors; nothing was run')
    await page.screenshot({ path: SHOTS + 'observatory-lab.png', fullPage: true })
  })

  test('no console errors (but the 400, 413 and 422 the error tests asked for: Chromium logs any 4xx)', () => {
    const deliberate = (e: string) => /status of (400|413|422)/.test(e)
    expect(consoleErrors.filter((e) => !deliberate(e))).toEqual([])
    expect(consoleErrors.filter(deliberate)).toHaveLength(3)
  })
})

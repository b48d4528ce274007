// The Observatory in a real browser against a real server: each control works end to end and the
// view reflects it; errors appear beside their control; the controls work from the keyboard; no
// console errors. Screenshots go to e2e/screenshots/.
import { describe, expect, test } from 'vitest'
import { autoBackend } from '../testing/backends.js'
import { withObservatory } from './browser.js'

const session = withObservatory(['--size', '64', '--material', 'europium_crystal'])
const { consoleErrors, shots: SHOTS } = session

const status = () => session.page.getByTestId('status').textContent()

describe('the Observatory, server mode', () => {
  test('opens on the live field, connected to the server', async () => {
    await expect.poll(status).toMatch(/^step 0 · 0 memories · energy/)
    // the server's backend is `auto`'s: the CPU where the only adapter is a software one
    expect(await session.page.getByTestId('mode').textContent()).toBe(`Server · ${await autoBackend()} · europium_crystal · N = 64`)
    expect(await session.page.title()).toBe('Resonant Crystal Observatory')
  })

  test('WRITE puts a memory into the field; a click on the field places a pulse', async () => {
    await session.page.getByLabel('text').fill('the cold glyph remembers')
    await session.page.getByRole('button', { name: 'Write' }).click()
    await expect.poll(status).toMatch(/0 · 1 memory · /)
    const before = await status()
    await session.page.getByTestId('field').click({ position: { x: 300, y: 200 } })
    await expect.poll(status).not.toBe(before) // the energy changed
    await session.page.screenshot({ path: SHOTS + 'observatory-written.png' })
  })

  test('RESONATE advances the field and the timeline grows, with values under the pointer', async () => {
    await session.page.getByLabel('steps').fill('300')
    await session.page.getByRole('button', { name: 'Resonate' }).click()
    await expect.poll(status).toMatch(/^step 300 · /)
    await expect.poll(() => session.page.locator('[data-testid="timeline-chart"] path').count()).toBe(3)
    await session.page.locator('.timeline svg').scrollIntoViewIfNeeded()
    const box = (await session.page.locator('.timeline svg').boundingBox())!
    await session.page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2)
    await expect.poll(() => session.page.getByTestId('timeline-chart-values').textContent()).toMatch(/^step \d+: energy [\d.e+-]+/)
  })

  test('DREAM shows its report', async () => {
    await session.page.getByRole('button', { name: 'Dream deep' }).click()
    const report = session.page.getByTestId('dream-report')
    await report.waitFor()
    expect(await report.textContent()).toMatch(/modedeepenergy[\d.]+ → [\d.]+pruned\d+%amplified\d+%kicks\d+/)
    await session.page.screenshot({ path: SHOTS + 'observatory-dreamed.png' })
  })

  test('a server error appears beside the control that caused it, in words', async () => {
    await session.page.getByLabel('steps').fill('500000')
    await session.page.getByRole('button', { name: 'Resonate' }).click()
    const error = session.page.locator('#resonate-error')
    await error.waitFor()
    expect(await error.textContent()).toBe('steps is 500000, over the limit of 100000 (steps_per_request)')
    expect(await session.page.locator('#write-error').count()).toBe(0)
  })

  test('the controls work from the keyboard', async () => {
    await session.page.getByLabel('text').focus()
    await session.page.keyboard.press('Control+A')
    await session.page.keyboard.type('typed without a mouse')
    await session.page.keyboard.press('Enter') // submits the Write form
    await expect.poll(status).toMatch(/ · 2 memories/)
    const before = Number((await status())!.match(/^step (\d+)/)![1])
    await session.page.getByLabel('steps').focus()
    await session.page.keyboard.press('Control+A')
    await session.page.keyboard.type('10')
    await session.page.keyboard.press('Tab') // to the Resonate button
    await session.page.keyboard.press('Enter')
    await expect.poll(status).toMatch(new RegExp(`^step ${before + 10} · `))
    // a pulse placed by coordinates, from the keyboard
    const energy = await status()
    await session.page.locator('input[name="pulse-x"]').focus()
    await session.page.keyboard.press('Control+A')
    await session.page.keyboard.type('0.25')
    await session.page.keyboard.press('Enter')
    await expect.poll(status).not.toBe(energy)
    await session.page.locator('input[name="pulse-x"]').fill('7')
    await session.page.getByRole('button', { name: 'Pulse' }).click()
    await expect.poll(() => session.page.locator('#pulse-error').textContent()).toBe('body/x must be <= 1')
  })

  test('the conditions change the material and temperature of the field', async () => {
    await session.page.locator('select[name="material"]').selectOption('silicon')
    await session.page.getByLabel('temperature (K)').fill('77')
    await session.page.getByRole('button', { name: 'Apply' }).click()
    await expect.poll(() => session.page.getByTestId('mode').textContent()).toMatch(/· silicon ·/)
  })

  test('EVOLVE runs on the server with live progress, and says what it registered', async () => {
    await session.page.locator('select[name="evolve-material"]').selectOption('vacuum')
    await session.page.getByLabel('generations').fill('2')
    await session.page.getByLabel('population').fill('4')
    await session.page.locator('input[name="evolve-size"]').fill('32')
    await session.page.getByRole('button', { name: 'Evolve' }).click()
    const registered = session.page.getByTestId('evolve-registered')
    await registered.waitFor({ timeout: 60_000 })
    expect(await registered.textContent()).toMatch(/^(CRY-\d{6}( CRY-\d{6})*|nothing new)$/)
    expect(await session.page.getByTestId('evolve-progress').textContent()).toMatch(/^done · best fitness [\d.]+ · registered \d+/)
    expect(await session.page.getByTestId('evolve-progress').textContent()).toMatch(/QD-score [\d.]+ · coverage [\d.]+% \(\d+ cells\)/)
    // the QD curve and the best and mean fitness, two generations each
    expect(await session.page.locator('[data-testid="evolve-qd"] path').count()).toBe(1)
    expect(await session.page.locator('[data-testid="evolve-fitness"] path').count()).toBe(2)
    // and they are in the primitive browser
    const ids = ((await registered.textContent()) ?? '').split(' ').filter((x) => x.startsWith('CRY-'))
    await session.page.getByRole('tab', { name: 'Primitives' }).click()
    for (const id of ids) await session.page.getByRole('button', { name: id, exact: true }).waitFor()
    await session.page.getByRole('tab', { name: 'Observatory' }).click()
  })

  test('the program editor runs a .crystal program and shows its trace; errors come with line and column', async () => {
    await session.page.getByRole('button', { name: 'Run' }).click()
    const trace = session.page.getByTestId('program-trace')
    await trace.waitFor()
    expect(await trace.textContent()).toMatch(/^2 {2}material europium_crystal[\s\S]*probe "the cold glyph remembers": resonance/)
    await session.page.getByLabel('program').fill('PULSE 0.5\nMATERIAL unobtainium')
    await session.page.getByRole('button', { name: 'Run' }).click()
    const errors = session.page.getByTestId('program-errors')
    await errors.waitFor()
    expect(await errors.locator('li').allTextContents()).toEqual([
      'line 1, column 1: PULSE takes 2 to 6 arguments, got 1 (PULSE x y [radius] [amplitude] [frequency] [phase])',
      expect.stringMatching(/^line 2, column 10: unknown material "unobtainium"/),
    ])
    expect(await session.page.locator('#run-error').textContent()).toBe('the program has 2 errors; nothing was run')
    await session.page.screenshot({ path: SHOTS + 'observatory-lab.png', fullPage: true })
  })

  test('no console errors (but the 400, 413 and 422 the error tests asked for: Chromium logs any 4xx)', () => {
    const deliberate = (e: string) => /status of (400|413|422)/.test(e)
    expect(consoleErrors.filter((e) => !deliberate(e))).toEqual([])
    expect(consoleErrors.filter(deliberate)).toHaveLength(3)
  })
})

// The swarm with a browser tab among the explorers: three explorer processes and one tab (over the
// bus's websocket) explore different materials; an archivist started afterwards ends with every
// announced primitive once, by uuid, with provenance naming its origin node; the Swarm view shows the
// nodes and the discoveries.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { softwareGpu } from '../testing/backends.js'
import { call, heldPrimitives, startNats, startServer, type RunningNats, type RunningServer } from '../testing/services.js'
import { exploreTogether, FLOOR, ownAnnounceable, runAnnouncing } from '../testing/swarm.js'
import { openObservatory } from './browser.js'

const SHOTS = new URL('./screenshots/', import.meta.url).pathname
let nats: RunningNats
let server: RunningServer
let browser: Browser
let page: Page
const consoleErrors: string[] = []

beforeAll(async () => {
  nats = await startNats()
  server = await startServer(['--size', '32'], { SVC_NATS_WS_URL: nats.wsUrl, SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE: String(FLOOR) })
  ;({ browser, page } = await openObservatory(server.url, consoleErrors, 900))
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await nats?.stop()
})

describe('the swarm, with a browser tab among the explorers', () => {
  test('three processes and a tab explore; a late archivist gets every announcement once, with its origin', async () => {
    await page.getByRole('button', { name: 'This tab' }).click()
    await page
      .getByTestId('mode')
      .filter({ hasText: /^This tab · / })
      .waitFor()
    await page.getByRole('tab', { name: 'Swarm' }).click()
    const who = await page.locator('h3', { hasText: 'Explore in this tab' }).locator('.muted').textContent({ timeout: 15_000 })
    const tabNode = who!.replace(/^as /, '')
    expect(tabNode).toMatch(/^tab-[0-9a-f]{6}$/)

    const explorers = ['vacuum', 'europium_crystal', 'silicon'].map((material, k) => ({
      material,
      node: `explorer-${k + 1}`,
      dir: mkdtempSync(join(tmpdir(), `crystal-e2e-swarm-${k}-`)),
    }))
    const processes = exploreTogether(nats.url, explorers)
    // the same round as `crystal explore` runs it alone, for the chart's figures to be held to
    const alone = runAnnouncing(
      { SVC_CRYSTAL_DATA_DIR: mkdtempSync(join(tmpdir(), 'crystal-e2e-alone-')) },
      'explore',
      '--material',
      'diamond_nv',
      ...['--rounds', '1', '--interval', '0', '--generations', '2', '--population', '4', '--size', '24', '--seed', '1', '--json'],
    )
    await page.locator('input[name="swarm-material"]').fill('diamond_nv')
    await page.locator('input[name="swarm-generations"]').fill('2')
    await page.getByRole('button', { name: 'Explore' }).click()
    await page
      .getByTestId('swarm-progress')
      .filter({ hasText: /round 1 \(diamond_nv\): registered \d+, .*; merged \d+ from the swarm, announced \d+/ })
      .waitFor({ timeout: 120_000 })
    const finished = await processes
    for (const r of finished) expect(r.status, r.stderr).toBe(0)
    const cli = await alone
    expect(cli.status, cli.stderr).toBe(0)
    const cliRound = JSON.parse(cli.stdout.trim())

    // the round as line charts: QD-score, best and mean per generation, the figures `crystal explore` gives for the same settings
    const series = 'run 1 round 1: diamond_nv 2×4 N=24 seed 1'
    /** What a chart's legend says under the pointer at a share of its width (the nearest generation). */
    const under = async (chart: string, share: number, generation: number) => {
      await page.getByTestId(chart).scrollIntoViewIfNeeded()
      const box = (await page.getByTestId(chart).locator('svg').boundingBox())!
      await page.mouse.move(box.x + share * box.width, box.y + box.height / 2)
      await expect.poll(() => page.getByTestId(`${chart}-values`).textContent()).toMatch(new RegExp(`^generation ${generation}: `))
      return page.getByTestId(`${chart}-values`).textContent()
    }
    // a software adapter gives the CPU twin's bits, so the tab (its WebGPU) and the CLI (`auto`: the CPU
    // there) give the same figures to the digit; a hardware GPU's driver fuses multiply-adds, so there
    // they are held within 0.01
    const exact = await softwareGpu()
    const says = (text: string | null, label: string, value: number, digits: number) => {
      if (exact) return expect(text).toContain(`${label} ${value.toFixed(digits)}`)
      const shown = text?.match(new RegExp(`${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (-?[\\d.]+)`))?.[1]
      expect(shown, `${label} in ${text}`).toBeDefined()
      expect(Math.abs(Number(shown) - value), `${label} in ${text}`).toBeLessThan(0.01)
    }
    for (const [share, g] of [
      [0.01, cliRound.generations[0]],
      [0.99, cliRound.generations[1]],
    ] as const) {
      says(await under('swarm-qd', share, g.generation), series, g.qd_score, 2)
      const fitness = await under('swarm-fitness', share, g.generation)
      says(fitness, 'best', g.best_fitness, 3)
      says(fitness, 'mean', g.mean_fitness, 3)
    }
    // and the round's line says what the CLI's says of the search
    const progress = await page.getByTestId('swarm-progress').textContent()
    says(progress, 'best fitness', cliRound.best_fitness, 3)
    says(progress, 'search archive QD-score', cliRound.qd_score, 2)
    if (exact) expect(progress).toContain(`, coverage ${(100 * cliRound.coverage).toFixed(1)}% (${cliRound.elites} cells)`)
    else expect(progress).toMatch(/, coverage [\d.]+% \(\d+ cells\)/)
    expect(await page.locator('#swarm-error').count()).toBe(0)

    // a process's rounds, drawn from its progress on the bus: the figures its --json lines report, generation by generation
    const explorer = explorers[1]
    const lines = finished[1].stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.round)).toEqual([1, 2])
    await page.locator('select[name="swarm-peer"]').selectOption(explorer.node, { timeout: 60_000 })
    for (const line of lines) {
      const last = line.generations.at(-1)
      expect(last.generation).toBe(1)
      // the round's last QD-score is its search archive's, as the round's line says
      expect(last.qd_score).toBe(line.qd_score)
      const label = `${explorer.node} round ${line.round}: ${explorer.material} 1 generation`
      await expect.poll(() => under('swarm-peer-qd', 0.5, last.generation)).toContain(`${label} ${last.qd_score.toFixed(2)}`)
    }
    const latest = lines[1].generations.at(-1)
    const peerFitness = await under('swarm-peer-fitness', 0.5, latest.generation)
    expect(peerFitness).toContain(`best ${latest.best_fitness.toFixed(3)}`)
    expect(peerFitness).toContain(`mean ${latest.mean_fitness.toFixed(3)}`)

    const tabAnnounced = (
      (await page
        .getByTestId('swarm-announced')
        .textContent()
        .catch(() => '')) ?? ''
    )
      .split(' ')
      .filter(Boolean)
    const tabPrimitives = await Promise.all(tabAnnounced.map(async (id) => (await call(server.url, 'GET', `/primitives/${id}`)).body))

    const archive = mkdtempSync(join(tmpdir(), 'crystal-e2e-archive-'))
    const a = await runAnnouncing({ SVC_NATS_URL: nats.url, SVC_CRYSTAL_DATA_DIR: archive }, 'archive', '--catch-up')
    expect(a.status, a.stderr).toBe(0)
    const archived = heldPrimitives(archive)
    const announced = [
      ...explorers.flatMap((e) => ownAnnounceable(e.dir).map((p) => ({ ...p, node: e.node }))),
      ...tabPrimitives.map((p) => ({ ...p, node: tabNode })),
    ]
    expect(tabPrimitives.length).toBeGreaterThan(0)
    expect(archived.map((p) => p.uuid).sort()).toEqual(announced.map((p) => p.uuid).sort())
    for (const p of announced)
      expect(archived.find((q) => q.uuid === p.uuid).provenance).toMatchObject({ node: p.node, origin_id: p.id, origin_uuid: p.uuid })
    expect(new Set(archived.map((p) => p.id)).size).toBe(archived.length)
    expect(archived.every((p) => p.persistence >= FLOOR)).toBe(true)

    // the Swarm view saw the nodes and the discoveries
    const nodes = await page.getByTestId('swarm-nodes').locator('tbody td:first-child').allTextContents()
    expect(nodes).toEqual(expect.arrayContaining(['explorer-1', 'explorer-2', 'explorer-3', tabNode]))
    expect(await page.getByTestId('swarm-feed').locator('li').count()).toBeGreaterThan(0)
    for (const width of [1440, 800]) {
      await page.setViewportSize({ width, height: 900 })
      await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
      await page.screenshot({ path: `${SHOTS}swarm-${width}.png`, fullPage: true })
    }
  })

  test('no console errors', () => {
    expect(consoleErrors).toEqual([])
  })
})

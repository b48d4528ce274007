// The primitive browser in a real browser: paging, server-side sorting, filters, the detail view
// (signature image, metrics, lineage graph, similar primitives), by mouse and by keyboard.
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { CLASS_NAMES, type ClassToken } from '../engine/contracts/registry.js'
import { ARCHIVE_CELLS } from '../engine/discovery/archive.js'
import { call, runCrystal, startServer, type RunningServer } from '../testing/services.js'
import { openObservatory } from './browser.js'

const SHOTS = new URL('./screenshots/', import.meta.url).pathname
let server: RunningServer
let browser: Browser
let page: Page
const consoleErrors: string[] = []
const rowIds = () => page.locator('[data-testid="primitives-table"] tbody tr td:first-child').allTextContents()

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  server = await startServer(['--size', '32'])
  // a registry to browse: a real evolve through the API, then descendants of its finds registered as
  // another node would (POST /primitives): novelty keeps a small evolve's finds few
  let job = (
    await call(server.url, 'POST', '/crystal/evolve', { material: 'europium_crystal', generations: 3, population: 8, size: 32, seed: 4 })
  ).body
  while (job.status === 'running') {
    await new Promise((r) => setTimeout(r, 100))
    job = (await call(server.url, 'GET', `/crystal/jobs/${job.id}`)).body
  }
  const found = (await call(server.url, 'GET', '/primitives?limit=500')).body.items
  const classes = ['echo_ring', 'standing_echo', 'harmonic_bridge', 'phase_knot', 'memory_seed', 'attractor_field']
  const descendants = classes.map((cls, k) => {
    const { id, uuid: _u, provenance: _p, discovered_at: _d, ...parent } = found[k % found.length]
    return { ...parent, class: cls, lineage: [id], signature: parent.signature.map((v: number, i: number) => (i % (k + 2) ? v : -v)) }
  })
  await call(server.url, 'POST', '/primitives', { candidates: descendants })
  ;({ browser, page } = await openObservatory(server.url, consoleErrors, 900))
  await page.getByRole('tab', { name: 'Primitives' }).click()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe('the primitive browser', () => {
  test('pages through the registry', async () => {
    const total = (await call(server.url, 'GET', '/primitives?limit=1')).body.total
    expect(total).toBeGreaterThan(5)
    await page.locator('select[name="page-size"]').selectOption('5')
    await expect.poll(() => page.getByTestId('page').textContent()).toBe(`1–5 of ${total}`)
    // the label and the rows are drawn from the same answer, but not in one frame: a CI run read 11 rows under "1–5"
    await expect.poll(rowIds).toEqual(['CRY-000001', 'CRY-000002', 'CRY-000003', 'CRY-000004', 'CRY-000005'])
    await page.getByRole('button', { name: 'Next' }).click()
    await expect.poll(() => page.getByTestId('page').textContent()).toMatch(new RegExp(`^6–${Math.min(10, total)} of ${total}$`))
    await page.getByRole('button', { name: 'Previous' }).click()
  })

  test('sorts on the server by the column asked for', async () => {
    await page.getByRole('button', { name: 'Persistence %' }).click()
    const expected = (await call(server.url, 'GET', '/primitives?sort=persistence&order=desc&limit=5')).body.items.map(
      (p: { id: string }) => p.id,
    )
    await expect.poll(rowIds).toEqual(expected)
    expect(await page.locator('th[aria-sort="descending"]').textContent()).toContain('Persistence %')
  })

  test("the archive map places a material's primitives in the MAP-Elites grid; a click opens a cell's elite", async () => {
    await page.locator('input[name="filter-material"]').fill('europium_crystal')
    const map = page.getByTestId('archive-map')
    await map.waitFor()
    await expect.poll(() => map.locator('button.cell').count()).toBeGreaterThan(0)
    expect(await map.locator('figcaption').textContent()).toMatch(
      new RegExp(
        `^registered archive of europium_crystal: \\d+ of ${ARCHIVE_CELLS} cells \\([\\d.]+%\\), QD-score [\\d.]+ over \\d+ registered primitives`,
      ),
    )
    // and it says which of an evolve's figures it is
    expect(await map.getByTestId('archive-note').textContent()).toMatch(
      /the figure `crystal evolve` and the Lab report as the registered archive/,
    )
    expect(await map.locator('tbody th[scope="rowgroup"]').allTextContents()).toEqual([
      'Echo Ring',
      'Standing Echo',
      'Harmonic Bridge',
      'Phase Knot',
      'Attractor Field',
      'Memory Seed',
    ])
    const cell = map.locator('button.cell').first()
    const id = (await cell.getAttribute('aria-label'))!.split(': ').at(-1)!
    await cell.click()
    await expect.poll(() => page.getByTestId('primitive-detail').locator('h2').textContent()).toMatch(new RegExp(`^${id} `))
    await page.screenshot({ path: SHOTS + 'archive-map.png', fullPage: true })
    await page.locator('input[name="filter-material"]').fill('')
  })

  test('after an evolve, the map shows the registered archive the CLI and the REST job report for that material', async () => {
    const mapSays = async (material: string) => {
      await page.locator('input[name="filter-material"]').fill('')
      await page.locator('input[name="filter-material"]').fill(material)
      const caption = page.getByTestId('archive-map').locator('figcaption')
      await caption.waitFor()
      return caption.textContent()
    }
    // the CLI into the server's own registry: its last line names both archives
    const cli = await runCrystal(
      ['evolve', '--material', 'europium_crystal', '--generations', '2', '--population', '6', '--size', '32', '--seed', '9'],
      { SVC_CRYSTAL_DATA_DIR: server.dataDir },
    )
    expect(cli.status, cli.stderr).toBe(0)
    const [, search, qd, cells] = cli.stdout.match(
      /search archive QD-score ([\d.]+), coverage [\d.]+% \(\d+ cells\); registered archive of europium_crystal now QD-score ([\d.]+) over (\d+) cells? /,
    )!
    expect(Number(search)).toBeGreaterThan(0)
    await expect
      .poll(() => mapSays('europium_crystal'))
      .toMatch(new RegExp(`^registered archive of europium_crystal: ${cells} of \\d+ cells \\([\\d.]+%\\), QD-score ${qd} `))
    // a REST evolve on another material: its job reports the figure the map then shows
    let job = (await call(server.url, 'POST', '/crystal/evolve', { material: 'silicon', generations: 2, population: 6, size: 32, seed: 2 }))
      .body
    await expect
      .poll(async () => (job = (await call(server.url, 'GET', `/crystal/jobs/${job.id}`)).body).status, { timeout: 120_000 })
      .toBe('done')
    expect(job.registered_archive).toMatchObject({ material: 'silicon' })
    const a = job.registered_archive
    await expect
      .poll(() => mapSays('silicon'))
      .toMatch(new RegExp(`^registered archive of silicon: ${a.cells} of \\d+ cells \\([\\d.]+%\\), QD-score ${a.qd_score.toFixed(2)} `))
    await page.locator('input[name="filter-material"]').fill('')
  })

  test('filters by class', async () => {
    const cls = (await call(server.url, 'GET', '/primitives?limit=1')).body.items[0].class
    await page.locator('select[name="filter-class"]').selectOption(cls)
    await expect
      .poll(async () =>
        (await page.locator('[data-testid="primitives-table"] tbody tr td:nth-child(2)').allTextContents()).every(
          (c) => c === `${CLASS_NAMES[cls as ClassToken]} (${cls})`,
        ),
      )
      .toBe(true)
    await page.locator('select[name="filter-class"]').selectOption('')
  })

  test('a primitive in detail: signature image, metrics, lineage graph, similar ones; reached by keyboard', async () => {
    // the latest one has ancestors
    const withLineage = (await call(server.url, 'GET', '/primitives?limit=500')).body.items.find(
      (p: { lineage: string[] }) => p.lineage.length,
    )
    expect(withLineage).toBeDefined()
    await page.getByRole('button', { name: 'ID' }).click() // back to id order
    await page.locator('input[name="filter-material"]').fill('europium_crystal')
    await page.locator('select[name="page-size"]').selectOption('50')
    const link = page.getByTestId('primitives-table').getByRole('button', { name: withLineage.id, exact: true }) // the table's, not a similar one's
    await link.focus()
    await page.keyboard.press('Enter')
    const detail = page.getByTestId('primitive-detail')
    await detail.waitFor()
    expect(await detail.locator('h2').textContent()).toBe(
      `${withLineage.id} ${CLASS_NAMES[withLineage.class as ClassToken]} (${withLineage.class})`,
    )
    expect(await page.getByTestId('signature').getAttribute('width')).toBe('16')
    expect(await detail.textContent()).toContain('persistence')
    // the ancestors are fetched as the graph draws
    const nodes = () => page.getByTestId('lineage').locator('text').allTextContents()
    await expect.poll(nodes).toEqual(expect.arrayContaining([withLineage.id, ...withLineage.lineage]))
    await expect.poll(() => page.getByTestId('similar').locator('li').count()).toBeGreaterThan(0)
    await page.screenshot({ path: SHOTS + 'primitives.png', fullPage: true })
  })

  test('no console errors', () => {
    expect(consoleErrors).toEqual([])
  })
})

// The Observatory as an instrument, in Debian's Chromium against the built server: asking the live
// field (recall and probe as bars against their floors, the reason when nothing resonates), a long
// Resonate that plays with progress and stops, the view's absolute scale showing a dream's cut, orbit,
// zoom and a canvas that follows the window, the timeline's round ticks, log scale and marks, evolve as
// line charts beside the CLI's figures, and the empty states. Screenshots at 1440 and 800 px.
import { describe, expect, test } from 'vitest'
import { call } from '../testing/services.js'
import { withObservatory } from './browser.js'

// the CPU backend: a hardware GPU (what `auto` picks) runs the 100,000 steps of the long Resonate in about
// a second, before its Stop could land
const session = withObservatory(['--size', '64', '--material', 'europium_crystal', '--backend', 'cpu'], { width: 1440, height: 900 })
const { consoleErrors, shots: SHOTS } = session

const status = () => session.page.getByTestId('status').textContent()
/** The status once it has held for a second: what the feed says of a field nothing is changing. */
const settled = async () => {
  let last = await status()
  for (let waited = 0; waited < 30; waited++) {
    await session.page.waitForTimeout(1_000)
    const now = await status()
    if (now === last) return now
    last = now
  }
  throw new Error(`the status did not settle in 30 s: ${last}`)
}
const stepOf = async () => Number((await status())?.match(/^step (\d+)/)?.[1] ?? NaN)
const resonate = async (steps: number) => {
  await session.page.getByLabel('steps').fill(String(steps))
  await session.page.getByRole('button', { name: 'Resonate' }).click()
}

describe('asking the field', () => {
  test('an empty field: recall says why nothing comes back, and a probe reads below its floor', async () => {
    await expect.poll(status).toMatch(/^step 0 · 0 memories/)
    await session.page.getByLabel('query').fill('glyph')
    await session.page.getByRole('button', { name: 'Recall' }).click()
    await expect
      .poll(() => session.page.getByTestId('recall-reason').textContent())
      .toBe('the medium holds no memories yet; write something first')
    expect(await session.page.locator('ol.hits li').count()).toBe(0)
    await session.page.getByRole('button', { name: 'Probe' }).click()
    await expect
      .poll(() => session.page.getByTestId('probe-result').textContent())
      .toMatch(/below the floor, the field does not hold it \(read at the present: nothing has been written\)$/)
  })

  test('after a write, recall draws the memory as a bar above its noise floor, with the figures the server reports', async () => {
    await session.page.getByLabel('text').fill('the cold glyph remembers')
    await session.page.getByRole('button', { name: 'Write', exact: true }).click()
    await expect.poll(status).toMatch(/1 memory/)
    await session.page.getByLabel('query').fill('glyph')
    await session.page.getByRole('button', { name: 'Recall' }).click()
    const bar = session.page.getByRole('meter', { name: 'match of “the cold glyph remembers”' })
    await bar.waitFor()
    const answer = (await call(session.server.url, 'POST', '/crystal/recall', { text: 'glyph', k: 5 })).body
    const hit = answer.hits[0]
    const match = hit.match ?? hit.score
    const meter = await bar.evaluate((m: HTMLMeterElement) => ({ value: m.value, max: m.max, low: m.low }))
    expect(meter.value).toBeCloseTo(match, 6)
    expect(meter.low).toBeCloseTo(hit.noise_floor, 6) // the floor is the meter's own bound too
    expect(await bar.locator('..').getAttribute('class')).toBe('bar above')
    expect(await session.page.locator('ol.hits .figures').first().textContent()).toContain(`match ${match.toFixed(3)}`)
    expect(await session.page.locator('ol.hits .figures').first().textContent()).toContain(`floor ${hit.noise_floor.toFixed(3)}`)
    // the floor's tick sits where the floor is on the bar's scale
    const box = (await bar.locator('..').boundingBox())!
    const tick = (await bar.locator('..').locator('.floor').boundingBox())!
    expect((tick.x + tick.width / 2 - box.x) / box.width).toBeCloseTo(hit.noise_floor / meter.max, 2)
    expect(meter.value).toBeGreaterThan(hit.noise_floor)
    await session.page.getByTestId('recall-result').screenshot({ path: SHOTS + 'instrument-1440-recall.png' })
    // a probe of an unrelated text stays under its floor
    await session.page.getByLabel('query').fill('a warm river of stones')
    await session.page.getByRole('button', { name: 'Probe' }).click()
    await expect.poll(() => session.page.getByTestId('probe-result').textContent()).toMatch(/below the floor/)
    await session.page.getByLabel('query').fill('the cold glyph remembers')
    await session.page.getByRole('button', { name: 'Probe' }).click()
    await expect
      .poll(() => session.page.getByTestId('probe-result').textContent())
      .toMatch(/: the field holds it \(best at the write of step 0\)$/)
  })
})

describe('the view tells the truth', () => {
  test('a long Resonate plays: the step and the progress move while it runs, and Stop ends it between chunks', async () => {
    const from = await stepOf()
    await resonate(100_000)
    const progress = session.page.getByTestId('resonate-progress')
    // the field is seen at several steps on the way, not only at the end
    const seen = new Set<number>()
    await expect.poll(async () => (seen.add(await stepOf()), seen.size), { timeout: 30_000 }).toBeGreaterThanOrEqual(4)
    expect(await progress.textContent()).toMatch(/^\d+ of 100000 steps$/)
    await session.page.getByRole('button', { name: 'Stop' }).click()
    await expect.poll(() => progress.textContent()).toMatch(/^\d+ of 100000 steps · stopped$/)
    const done = Number((await progress.textContent())!.match(/^(\d+)/)![1])
    expect(done).toBeGreaterThan(0)
    expect(done).toBeLessThan(100_000)
    await expect.poll(stepOf).toBe(from + done)
    expect(await session.page.getByRole('button', { name: 'Resonate' }).isEnabled()).toBe(true)
  })

  test('on the absolute scale a faded field looks faded (the per-frame scale hides it); a dream keeps the scale', async () => {
    const page = session.page
    const legend = page.getByTestId('field-legend')
    const a = Number(await page.locator('input[name="field-a"]').inputValue())
    expect(a).toBeGreaterThan(0)
    expect(await legend.textContent()).toContain(`+${a.toPrecision(3)}`)
    expect(await page.getByTestId('field-scale').textContent()).toMatch(/absolute scale · peak now [\d.e+-]+/)
    // the mean brightness of the canvas
    const brightness = () =>
      page.evaluate(() => {
        const c = document.querySelector('[data-testid="field"] canvas') as HTMLCanvasElement
        const copy = document.createElement('canvas')
        copy.width = c.width
        copy.height = c.height
        const g = copy.getContext('2d')!
        g.drawImage(c, 0, 0)
        const px = g.getImageData(0, 0, c.width, c.height).data
        let sum = 0
        for (let i = 0; i < px.length; i += 4) sum += px[i] + px[i + 1] + px[i + 2]
        return sum / (px.length / 4)
      })
    // after the long Resonate the field has faded well below the scale set when it was written ...
    const peak = Number((await page.getByTestId('field-scale').textContent())!.match(/peak now (\S+)/)![1])
    expect(peak).toBeLessThan(a / 4)
    const held = await brightness()
    // ... which the absolute scale shows and the per-frame scale, stretching this frame to its own peak, hides
    await page.locator('select[name="field-scale"]').selectOption('frame')
    expect(await page.getByTestId('field-scale').textContent()).toMatch(/this frame's peak/)
    await expect.poll(brightness).toBeGreaterThan(held + 1)
    await page.locator('select[name="field-scale"]').selectOption('absolute')
    await expect.poll(brightness).toBe(held)
    // a deep dream: the report, and the scale still where it was
    await page.getByRole('button', { name: 'Dream deep' }).click()
    await page.getByTestId('dream-report').waitFor()
    expect(Number(await page.locator('input[name="field-a"]').inputValue())).toBe(a)
    await page.screenshot({ path: SHOTS + 'instrument-1440-dreamed.png' })
  })

  test('drag orbits the view and the wheel zooms it, neither placing a pulse; by keyboard the arrows pan and Enter places one', async () => {
    const field = session.page.getByTestId('field')
    const box = (await field.boundingBox())!
    const shot = () => field.screenshot()
    // the status as the field stands: the feed may still be telling the last test's dream (its steps
    // came after its report, and under load a drag read a status 300 steps behind)
    const before = await settled()
    const still = await shot()
    await session.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
    await session.page.mouse.down()
    await session.page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 + 30, { steps: 8 })
    await session.page.mouse.up()
    const orbited = await shot()
    expect(orbited.equals(still)).toBe(false)
    await session.page.mouse.wheel(0, -400)
    await expect.poll(async () => (await shot()).equals(orbited)).toBe(false)
    expect(await status()).toBe(before) // a drag is not a click: no pulse
    // from the keyboard: the view takes the focus, the arrow keys pan it, Enter places a pulse at its centre
    await field.focus()
    const zoomed = await shot()
    await session.page.keyboard.press('ArrowLeft')
    await expect.poll(async () => (await shot()).equals(zoomed)).toBe(false)
    expect(await status()).toBe(before)
    await session.page.keyboard.press('Enter')
    await expect.poll(status).not.toBe(before)
  })

  test('the canvas follows the window: at 800 px it stays inside its column and the mode line shows', async () => {
    await session.page.setViewportSize({ width: 800, height: 900 })
    await expect
      .poll(async () => (await session.page.locator('[data-testid="field"] canvas').boundingBox())!.width)
      .toBeLessThanOrEqual(800)
    const canvas = (await session.page.locator('[data-testid="field"] canvas').boundingBox())!
    const host = (await session.page.getByTestId('field').boundingBox())!
    expect(canvas.width).toBeLessThanOrEqual(host.width + 1)
    expect(canvas.x + canvas.width).toBeLessThanOrEqual(800)
    const mode = (await session.page.getByTestId('mode').boundingBox())!
    expect(mode.width).toBeGreaterThan(100)
    expect(mode.x + mode.width).toBeLessThanOrEqual(800)
    // the controls are not under the canvas
    const write = (await session.page.getByRole('button', { name: 'Write', exact: true }).boundingBox())!
    expect(write.y >= canvas.y + canvas.height || write.x >= canvas.x + canvas.width).toBe(true)
    await session.page.screenshot({ path: SHOTS + 'instrument-800.png', fullPage: true })
    await session.page.setViewportSize({ width: 1440, height: 900 })
  })

  test('the timeline has round ticks, a log scale, and marks where energy went in and where a dream took it out', async () => {
    await session.page.getByRole('button', { name: 'Pulse' }).click()
    await resonate(30)
    await expect.poll(() => session.page.getByTestId('resonate-progress').textContent()).toBe('30 of 30 steps · done')
    const ticks = session.page.locator('[data-testid="timeline-chart"] text.x-tick')
    const values = (await ticks.allTextContents()).map((t) => Number(t.replace(/k$/, 'e3')))
    expect(values.length).toBeGreaterThanOrEqual(3)
    const gap = values[1] - values[0]
    expect(gap / 10 ** Math.floor(Math.log10(gap))).toSatisfy((m: number) => [1, 2, 5].some((k) => Math.abs(m - k) < 1e-9))
    const marks = session.page.locator('[data-testid="timeline-chart"] g.mark title')
    const labels = await marks.allTextContents()
    expect(labels.some((l) => /energy put in/.test(l))).toBe(true)
    expect(labels.some((l) => /a dream took energy out, -/.test(l))).toBe(true)
    await session.page.getByLabel('log scale').check()
    expect(await session.page.locator('[data-testid="timeline-chart"] svg').getAttribute('aria-label')).toBe('energy against step')
    const yTicks = await session.page.locator('[data-testid="timeline-chart"] .y-tick text').allTextContents()
    // on a log axis each tick is a 1, 2 or 5 times a power of ten
    for (const t of yTicks) expect(Number(t.replace(/k$/, 'e3').replace(/M$/, 'e6')).toExponential()).toMatch(/^[125]e/)
    await session.page.screenshot({ path: SHOTS + 'instrument-1440-timeline-log.png', fullPage: true })
    await session.page.getByLabel('log scale').uncheck()
  })
})

describe('evolve as a plot', () => {
  test('QD-score, best and mean per generation as lines, runs kept and compared, the figures the job reports', async () => {
    await session.page.locator('select[name="evolve-material"]').selectOption('europium_crystal')
    await session.page.getByLabel('generations').fill('3')
    await session.page.getByLabel('population').fill('4')
    await session.page.locator('input[name="evolve-size"]').fill('24')
    for (let run = 1; run <= 2; run++) {
      await session.page.getByRole('button', { name: 'Evolve' }).click()
      // this run's line joins the chart at its first generation; then wait for its end
      await expect.poll(() => session.page.locator('[data-testid="evolve-qd"] path').count(), { timeout: 90_000 }).toBe(run)
      await expect.poll(() => session.page.getByTestId('evolve-progress').textContent(), { timeout: 90_000 }).toMatch(/^done · /)
      if (run === 1) await session.page.getByLabel('population').fill('5')
    }
    expect(await session.page.locator('[data-testid="evolve-fitness"] path').count()).toBe(2)
    // the chart's last QD point is the figure the progress line (and `crystal evolve`) reports
    const line = (await session.page.getByTestId('evolve-progress').textContent())!
    const qd = line.match(/QD-score ([\d.]+)/)![1]
    const chart = session.page.locator('[data-testid="evolve-qd"] svg')
    await chart.scrollIntoViewIfNeeded()
    const box = (await chart.boundingBox())!
    await session.page.mouse.move(box.x + box.width - 20, box.y + box.height / 2)
    await expect.poll(() => session.page.getByTestId('evolve-qd-values').textContent()).toMatch(/^generation 3: /)
    expect(await session.page.getByTestId('evolve-qd-values').textContent()).toContain(`run 2: europium_crystal 3×5 N=24 ${qd}`)
    // beside the search's own archive, the material's registered archive: the figure its archive map shows
    const [, registeredQd, cells] = (await session.page.getByTestId('evolve-archives').textContent())!.match(
      new RegExp(
        `^search archive QD-score ${qd}, coverage [\\d.]+% \\(\\d+ cells\\); registered archive of europium_crystal now QD-score ([\\d.]+) over (\\d+) cells? `,
      ),
    )!
    expect(await session.page.getByTestId('evolve-note').textContent()).toMatch(/^The search archive is this run's own elites/)
    // a registered id never breaks across lines
    for (const id of await session.page.locator('[data-testid="evolve-registered"] .nowrap').all())
      expect(await id.evaluate((e) => getComputedStyle(e).whiteSpace)).toBe('nowrap')
    await session.page.getByTestId('evolve-progress').screenshot({ path: SHOTS + 'instrument-1440-evolve.png' })
    await session.page.getByRole('tab', { name: 'Primitives' }).click()
    await session.page.locator('input[name="filter-material"]').fill('europium_crystal')
    await expect
      .poll(() => session.page.getByTestId('archive-map').locator('figcaption').textContent())
      .toMatch(new RegExp(`^registered archive of europium_crystal: ${cells} of \\d+ cells \\([\\d.]+%\\), QD-score ${registeredQd} `))
    await session.page.locator('input[name="filter-material"]').fill('')
    await session.page.getByRole('tab', { name: 'Observatory' }).click()
  })
})

describe('switching engines', () => {
  test("a tab engine's field moves with it from WebGPU to the CPU twin; leaving it for the server asks first", async () => {
    await session.page.getByRole('button', { name: 'This tab' }).click()
    await expect
      .poll(() => session.page.getByTestId('mode').textContent(), { timeout: 60_000 })
      .toMatch(/^This tab · .* · carried from the server at step \d+ · /)
    // the tab took the server's field (its step and memories); from here on it is the tab's own
    const [, from, held] = (await status())!.match(/^step (\d+) · (\d+) memor/)!.map(Number)
    const memories = `${held + 1} ${held ? 'memories' : 'memory'}`
    await session.page.getByLabel('text').fill('carried across')
    await session.page.getByRole('button', { name: 'Write', exact: true }).click()
    await expect.poll(status).toMatch(new RegExp(`^step ${from} · ${memories}`))
    await resonate(20)
    await expect.poll(status).toMatch(new RegExp(`^step ${from + 20} · ${memories}`))
    const energy = (await status())!.match(/energy (\S+)/)![1]
    await session.page.locator('select[name="tab-backend"]').selectOption('cpu')
    await expect
      .poll(() => session.page.getByTestId('mode').textContent(), { timeout: 60_000 })
      .toMatch(new RegExp(`carried over from (WebGPU|the CPU twin) at step ${from + 20}`))
    await expect.poll(status).toMatch(new RegExp(`^step ${from + 20} · ${memories} · energy `))
    // the same field: the energy agrees to the four figures shown
    expect((await status())!.match(/energy (\S+)/)![1]).toBe(energy)
    // and its memory came along: the tab's own recall finds it, above its floor
    await session.page.getByLabel('query').fill('carried across')
    await session.page.getByRole('button', { name: 'Recall' }).click()
    const bar = session.page.getByRole('meter', { name: 'match of “carried across”' })
    await bar.waitFor()
    expect(await bar.locator('..').getAttribute('class')).toBe('bar above')
    // leaving: the question names what would be lost; declining keeps the tab's field
    let asked = ''
    session.page.once('dialog', (d) => ((asked = d.message()), d.dismiss()))
    await session.page.getByRole('button', { name: 'Server' }).click()
    await expect
      .poll(() => asked)
      .toContain(`This tab's field (step ${from + 20}, ${memories}) cannot move to the server and will be discarded`)
    expect(await session.page.getByTestId('mode').textContent()).toMatch(/^This tab/)
    session.page.once('dialog', (d) => d.accept())
    await session.page.getByRole('button', { name: 'Server' }).click()
    await expect.poll(() => session.page.getByTestId('mode').textContent()).toMatch(/^Server · /)
  })
})

describe('empty states', () => {
  test('Markets and Swarm say why they are empty', async () => {
    await session.page.getByRole('tab', { name: 'Swarm' }).click()
    await expect
      .poll(() => session.page.getByTestId('swarm-feed-empty').textContent())
      .toMatch(/^Not connected to the bus, so no discoveries can arrive here/)
    await session.page.getByRole('tab', { name: 'Markets' }).click()
    await expect.poll(() => session.page.getByTestId('markets-empty').textContent()).toMatch(/^No markets yet: open one below/)
    expect(await session.page.getByTestId('leaderboard-empty').textContent()).toMatch(/^No traders yet/)
    await session.page.screenshot({ path: SHOTS + 'instrument-1440-markets-empty.png', fullPage: true })
  })

  test('at 800 px every tab fits the window (no sideways scrolling)', async () => {
    const page = session.page
    await page.setViewportSize({ width: 800, height: 900 })
    for (const tab of ['Observatory', 'Primitives', 'Markets', 'Swarm']) {
      await page.getByRole('tab', { name: tab }).click()
      await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(800)
      await page.screenshot({ path: `${SHOTS}instrument-800-${tab.toLowerCase()}.png`, fullPage: true })
    }
    await page.setViewportSize({ width: 1440, height: 900 })
  })

  test('no console errors', () => {
    expect(consoleErrors).toEqual([])
  })
})

// The Observatory's speed, in headless Chromium on this machine: the built bundle (JS, gzipped), the
// time from navigation to the first field frame, and the frame rate in This tab mode: the field's
// frames shown, and the page's own animation frames (what a user feels as a page that answers).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { startServer } from './harness.js'

export interface ObservatoryBenchReport {
  bundle_js_gzip_kb: number
  first_frame_ms: number
  tab: {
    size: number
    backend: string
    frames_per_second: number
    page_frames_per_second: number
    steps_per_second: number
    seconds: number
  }[]
}

export async function runObservatoryBench(progress: (what: string) => void = () => {}): Promise<ObservatoryBenchReport> {
  const assets = new URL('../app/assets/', import.meta.url).pathname
  const js = readdirSync(assets).filter((f) => f.endsWith('.js'))
  const bundle = js.reduce((s, f) => s + gzipSync(readFileSync(join(assets, f))).length, 0) / 1024
  // playwright-core is a dev dependency: loaded only when this benchmark runs, so an installed CLI starts without it
  const { launch } = await import('../e2e/browser.js')
  const browser = await launch()
  const tab: ObservatoryBenchReport['tab'] = []
  let firstFrame = 0
  try {
    for (const [size, prefer] of [
      [64, 'gpu'],
      [256, 'gpu'],
      [256, 'cpu'],
    ] as const) {
      const server = await startServer(['--size', String(size)])
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
        const t0 = Date.now()
        await page.goto(server.url + '/')
        await page
          .getByTestId('status')
          .filter({ hasText: /^step / })
          .waitFor()
        if (size === 64) firstFrame = Date.now() - t0
        progress(`This tab at N = ${size} on ${prefer} ...`)
        await page.locator('select[name="tab-backend"]').selectOption(prefer)
        await page.getByRole('button', { name: 'This tab' }).click()
        await page
          .getByTestId('mode')
          .filter({ hasText: /^This tab · (gpu|cpu) backend/ })
          .waitFor({ timeout: 60_000 })
        await page.getByLabel('text').fill('the cold glyph remembers')
        await page.getByRole('button', { name: 'Write' }).click()
        await page.getByLabel('steps').fill('100000')
        await page.getByRole('button', { name: 'Resonate' }).click()
        const seconds = 5
        const measured = await page.evaluate(async (ms) => {
          const o = (window as any).__observatory
          let frames = 0
          let pageFrames = 0
          let counting = true
          const start = o.state().step
          const stop = o.subscribe(() => frames++)
          const tick = () => counting && (pageFrames++, requestAnimationFrame(tick))
          requestAnimationFrame(tick)
          await new Promise((r) => setTimeout(r, ms))
          stop()
          counting = false
          return { frames, pageFrames, steps: o.state().step - start, backend: o.state().backend }
        }, seconds * 1000)
        tab.push({
          size,
          backend: measured.backend,
          frames_per_second: measured.frames / seconds,
          page_frames_per_second: measured.pageFrames / seconds,
          steps_per_second: measured.steps / seconds,
          seconds,
        })
        await page.close()
      } finally {
        await server.stop()
      }
    }
  } finally {
    await browser.close()
  }
  return { bundle_js_gzip_kb: bundle, first_frame_ms: firstFrame, tab }
}

export function observatoryTable(r: ObservatoryBenchReport): Record<string, string | number>[] {
  return [
    { measure: 'bundle JS (gzip)', value: `${r.bundle_js_gzip_kb.toFixed(0)} KB`, target: '< 400 KB' },
    { measure: 'navigation to first field frame', value: `${r.first_frame_ms} ms`, target: '< 2000 ms' },
    ...r.tab.map((t) => ({
      measure: `This tab, N = ${t.size} (${t.backend})`,
      value: `${t.frames_per_second.toFixed(1)} frames/s (the page's own: ${t.page_frames_per_second.toFixed(1)}), ${t.steps_per_second.toFixed(0)} steps/s`,
      target: t.size === 256 ? '30 frames/s' : '',
    })),
  ]
}

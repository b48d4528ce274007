// Debian's Chromium, driven by playwright-core (Playwright's own browser download cannot run here),
// with the flags DESIGN.md section 3 found to work as root, plus software WebGL.
import { chromium, type Browser, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** `extra`: more flags, e.g. `--autoplay-policy=no-user-gesture-required` for a page that plays audio. */
export function launch(extra: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', ...extra],
  })
}

/** A browser with one page on the Observatory at url; the page's console errors go into errors. */
export async function openObservatory(url: string, errors: string[], height = 860): Promise<{ browser: Browser; page: Page }> {
  const browser = await launch()
  const page = await browser.newPage({ viewport: { width: 1280, height } })
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(url + '/')
  return { browser, page }
}

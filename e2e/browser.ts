// Debian's Chromium, driven by playwright-core (Playwright's own browser download cannot run here),
// with the flags DESIGN.md section 3 found to work as root, plus software WebGL.
import { mkdirSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { startServer, type RunningServer } from '../bench/harness.js'

export const CHROMIUM = '/usr/bin/chromium'
/** Where the browser tests leave their screenshots (ignored by git), to be looked at as a user would. */
export const SHOTS = new URL('./screenshots/', import.meta.url).pathname

/** `extra`: more flags, e.g. `--autoplay-policy=no-user-gesture-required` for a page that plays audio. */
export function launch(extra: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--enable-unsafe-webgpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
      ...extra,
    ],
  })
}

/** A browser with one page on the Observatory at url; the page's console errors go into errors. */
export async function openObservatory(
  url: string,
  errors: string[],
  height = 860,
  width = 1280,
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launch()
  const page = await browser.newPage({ viewport: { width, height } })
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(url + '/')
  return { browser, page }
}

/**
 * For a test file: before its tests, a built server started with `serverArgs` and the Observatory open
 * on it (screenshots folder made); after them, both closed. The returned object is filled in by then.
 */
export function withObservatory(serverArgs: string[], viewport: { width: number; height: number } = { width: 1280, height: 860 }) {
  const session = {
    server: undefined as unknown as RunningServer,
    browser: undefined as unknown as Browser,
    page: undefined as unknown as Page,
    consoleErrors: [] as string[],
    shots: SHOTS,
  }
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true })
    session.server = await startServer(serverArgs)
    ;({ browser: session.browser, page: session.page } = await openObservatory(
      session.server.url,
      session.consoleErrors,
      viewport.height,
      viewport.width,
    ))
  })
  afterAll(async () => {
    await session.browser?.close()
    await session.server?.stop()
  })
  return session
}

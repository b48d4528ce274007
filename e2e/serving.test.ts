// How the built server hands out the Observatory: its script compressed and cached for good (the
// file name carries its hash), the page revalidated, the address said at start-up, and /player
// without a music library explaining how to give one. Over real HTTP against the built server.
import { request } from 'node:http'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startServer, type RunningServer } from '../testing/services.js'

let server: RunningServer

beforeAll(async () => {
  server = await startServer(['--size', '16'])
})
afterAll(async () => {
  await server?.stop()
})

/** The bytes as sent (no decoding), with the headers. */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(server.url + path, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    })
      .on('error', reject)
      .end()
  })
}

describe('serving the Observatory', () => {
  test('start-up names the Observatory address', () => {
    expect(server.stderr()).toContain(`listening on ${server.url} (the Observatory at ${server.url}/, API docs at ${server.url}/docs)`)
  })

  test("the app's script goes out compressed and is cached for good; the page is revalidated", async () => {
    const page = await raw('/', { 'accept-encoding': 'gzip' })
    expect(page.status).toBe(200)
    expect(page.headers['cache-control']).toBe('no-cache')
    const html = (page.headers['content-encoding'] === 'gzip' ? gunzipSync(page.body) : page.body).toString()
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)![1]

    const plain = await raw(script)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')

    const gz = await raw(script, { 'accept-encoding': 'gzip' })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true)
    // a megabyte of minified JS compresses to well under a half
    expect(gz.body.length).toBeLessThan(plain.body.length / 2)

    const br = await raw(script, { 'accept-encoding': 'br, gzip' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    // the tab's CPU engine still gets the cross-origin isolation it needs
    expect(br.headers['cross-origin-embedder-policy']).toBe('require-corp')
  })

  test('the live feed is not compressed (an event stream must arrive as it is written)', async () => {
    const feed = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      const req = request(server.url + '/crystal/feed?size=8', { headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
        resolve(res.headers)
        req.destroy()
      })
      req.on('error', reject).end()
    })
    expect(feed['content-type']).toMatch(/^text\/event-stream/)
    expect(feed['content-encoding']).toBeUndefined()
  })

  test('/player without a music library says how to give one', async () => {
    const r = await fetch(server.url + '/player')
    expect(r.status).toBe(404)
    expect(r.headers.get('content-type')).toMatch(/^text\/html/)
    const text = await r.text()
    expect(text).toContain('No station on this server')
    expect(text).toContain('crystal serve --music ~/music')
    expect(text).toContain('SVC_STATION_MUSIC')
  })
})

// The station as a source of a real Icecast (icecast2): a listener there hears the same clean minute
// as one on /stream, titles arrive in UTF-8, listener counts come back, and a restart of Icecast
// costs the station no air and the Icecast mount only the time Icecast was down.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { call, demoLibrary, startIcecast, startServer, type RunningIcecast, type RunningServer } from '../../testing/services.js'
import { RATE } from './audio.js'
import { listenersOn } from './icecast.js'
import { listen, longestSilenceMs, loudnessPerTitle } from './listener.js'

const CROSSFADE_S = 2
// paced 4x real time: the minute takes some 15 s (Icecast relays whatever pace its source keeps)
const PACE = 4

test("Icecast's status document: no source, one source (an object), several (an array)", () => {
  const src = (mount: string, listeners: number) => ({ listenurl: `http://127.0.0.1:8000${mount}`, listeners })
  expect(listenersOn({ icestats: { admin: 'x' } }, '/radio.mp3')).toBeNull()
  expect(listenersOn({ icestats: { source: src('/radio.mp3', 3) } }, '/radio.mp3')).toBe(3)
  expect(listenersOn({ icestats: { source: [src('/other.mp3', 9), src('/radio.mp3', 2)] } }, '/radio.mp3')).toBe(2)
  expect(listenersOn({ icestats: { source: [src('/other.mp3', 9)] } }, '/radio.mp3')).toBeNull()
})

describe('on Icecast', () => {
  let icecast: RunningIcecast
  let server: RunningServer
  // 180 s: room for both deadlines below (30 s and 60 s) and the library's and server's start, so their message shows
  beforeAll(async () => {
    // four 14 s tracks: the minute plays all of them, Señal Fría's (non-ASCII) among them
    const { dir } = await demoLibrary(14, 4)
    icecast = await startIcecast()
    server = await startServer(['--music', dir], {
      SVC_STATION_PACE: String(PACE),
      SVC_STATION_CROSSFADE_S: String(CROSSFADE_S),
      SVC_ICECAST_URL: icecast.sourceUrl,
      SVC_ICECAST_POLL_MS: '300',
    })
    // (expect.poll lives only inside tests) by the clock: 150 tries of 100 ms were too few once on a loaded CI machine
    const deadline = Date.now() + 60_000
    while (!(await call(server.url, 'GET', '/api/station')).body.icecast.connected) {
      if (Date.now() > deadline) throw new Error(`the station never connected to Icecast: ${server.stderr()} ${icecast.log()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
    await icecast?.stop()
  })

  test('a listener on Icecast and one on /stream decode the same minute: no gap over 50 ms, tracks within 1 LU of -16 LUFS, UTF-8 titles change with the track; listeners counted', async () => {
    const [there, here] = await Promise.all([listen(`${icecast.url}/radio.mp3`, 60), listen(`${server.url}/stream`, 60)])
    for (const heard of [there, here]) {
      expect(heard.left.length).toBeGreaterThanOrEqual(60 * RATE)
      expect(longestSilenceMs(heard)).toBeLessThan(50)
      const titles = heard.titles.map((t) => t.title)
      expect(new Set(titles).size).toBeGreaterThanOrEqual(3)
      // whichever block is on, one of Señal Fría's two tracks is in or nearest its band
      expect(titles.some((t) => t.startsWith('Señal Fría - '))).toBe(true)
      const measured = loudnessPerTitle(heard, CROSSFADE_S / 2 + 1)
      expect(measured.length).toBeGreaterThanOrEqual(3)
      for (const m of measured) expect(Math.abs(m.lufs + 16), `${m.title}: ${m.lufs.toFixed(2)} LUFS`).toBeLessThan(1)
    }
    // the Icecast listener was counted while it listened (polled every 300 ms here)
    const state = (await call(server.url, 'GET', '/api/station')).body
    expect(state.icecast.url).toBe(`${icecast.url}/radio.mp3`)
    expect(state.icecast.url).not.toContain('hackme')
    expect(state.icecast.listeners_at).not.toBeNull()
  })

  test('the Icecast listener count reaches the station beside its own; the relay to Icecast is not counted as a listener of /stream', async () => {
    const station = async () => (await call(server.url, 'GET', '/api/station')).body
    // nobody listens anywhere: the relay is connected, and counts for nothing
    await expect.poll(async () => (await station()).icecast.listeners).toBe(0)
    expect((await station()).icecast.connected).toBe(true)
    expect((await station()).listeners).toBe(0)
    const res = await fetch(`${icecast.url}/radio.mp3`)
    await expect.poll(async () => (await station()).icecast.listeners).toBe(1)
    // one person on Icecast is not one on /stream
    expect((await station()).listeners).toBe(0)
    const here = await fetch(`${server.url}/stream`)
    await expect.poll(async () => (await station()).listeners).toBe(1)
    await here.body!.cancel()
    await res.body!.cancel()
    await expect.poll(async () => (await station()).icecast.listeners).toBe(0)
    await expect.poll(async () => (await station()).listeners).toBe(0)
  })

  test('an Icecast restart mid-stream: /stream plays on without a gap, the source reconnects, and Icecast listeners hear the station again', async () => {
    const before = (await call(server.url, 'GET', '/api/station')).body.icecast.reconnects
    const across = listen(`${server.url}/stream`, 24)
    await new Promise((r) => setTimeout(r, 1000))
    await icecast.restart(1000)
    await expect.poll(async () => (await call(server.url, 'GET', '/api/station')).body.icecast.connected).toBe(true)
    const state = (await call(server.url, 'GET', '/api/station')).body
    expect(state.icecast.reconnects).toBeGreaterThan(before)
    expect(server.stderr()).toMatch(/Icecast source lost/)
    const after = await listen(`${icecast.url}/radio.mp3`, 8)
    expect(after.left.length).toBeGreaterThanOrEqual(8 * RATE)
    expect(longestSilenceMs(after)).toBeLessThan(50)
    const heard = await across
    expect(longestSilenceMs(heard)).toBeLessThan(50)
    expect((await call(server.url, 'GET', '/api/station')).body.underruns).toBe(0)
  })
})

// The operator's station: the library with ids, requests that play next, skip, the play history, a
// rescan when the folder changes, HEAD /stream, up_next never empty, the time zone as a setting; the
// controls need the API token when one is set. Heard by a listener that decodes the stream.
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { streamTitle } from '../../engine/contracts/station.js'
import { scheduleAt } from '../../engine/station/schedule.js'
import { call, demoLibrary, startServer, type RunningServer } from '../../testing/services.js'
import { listen } from './listener.js'

const SECONDS = 12
const PACE = 4
const TOKEN = 'operator-token'
const auth = { authorization: `Bearer ${TOKEN}` }
const dir = mkdtempSync(join(tmpdir(), 'crystal-controls-'))
let server: RunningServer
let spare: string

beforeAll(async () => {
  const demo = await demoLibrary(SECONDS, 6)
  cpSync(demo.dir, dir, { recursive: true })
  // the sixth track leaves the folder before the station starts, to come back for the rescan
  const t = demo.tracks[5]
  spare = join(t.artist, t.album, `06 ${t.title}.mp3`)
  rmSync(join(dir, spare))
  server = await startServer(['--music', dir], {
    SVC_STATION_PACE: String(PACE),
    SVC_STATION_CROSSFADE_S: '2',
    SVC_CRYSTAL_API_TOKEN: TOKEN,
    SVC_STATION_TIME_ZONE: 'Europe/Berlin',
  })
})
afterAll(() => server?.stop())

const station = async () => (await call(server.url, 'GET', '/api/station')).body

describe('the operator', () => {
  test("HEAD /stream answers the stream's headers and opens no listener", async () => {
    const res = await fetch(`${server.url}/stream`, { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('audio/mpeg')
    expect(res.headers.get('icy-br')).toBe('128')
    expect((await res.arrayBuffer()).byteLength).toBe(0)
    expect((await station()).listeners).toBe(0)
  })

  test('the library lists every track with its id; the time zone is the setting, the block read in it; the DJ has its defaults', async () => {
    const lib = (await call(server.url, 'GET', '/api/station/library')).body
    expect(lib.tracks).toHaveLength(5)
    for (const t of lib.tracks) expect(t.id).toMatch(/^[^/]+\/[^/]+\/.+\.mp3$/)
    const s = await station()
    expect(s.time_zone).toBe('Europe/Berlin')
    expect(s.block).toBe(scheduleAt(new Date(), 'Europe/Berlin').block.name)
    expect((await call(server.url, 'GET', '/api/state')).body.dj).toMatchObject({ min_interval_s: 300, max_share: 0.1 })
  })

  test('up_next is never empty while a track plays, across track changes', async () => {
    const seen = new Set<string>()
    let empty = 0
    let samples = 0
    for (const until = Date.now() + 12_000; Date.now() < until; samples++) {
      const s = await station()
      if (s.on_air) {
        seen.add(s.on_air.track.id)
        if (s.up_next === null) empty++
        else expect(s.up_next.id).not.toBe(s.on_air.track.id)
      }
      await new Promise((r) => setTimeout(r, 40))
    }
    expect(seen.size).toBeGreaterThanOrEqual(3)
    expect(empty, `${empty} of ${samples} samples without up_next`).toBe(0)
  })

  test('a request needs the token and a track of the library; the requested track is what a listener hears next', async () => {
    const before = await station()
    const lib = (await call(server.url, 'GET', '/api/station/library')).body.tracks as { id: string; artist: string; title: string }[]
    const wanted = lib.find((t) => t.id !== before.on_air.track.id && t.id !== before.up_next.id)!
    expect((await call(server.url, 'POST', '/api/station/requests', { track_id: wanted.id })).status).toBe(401)
    const missing = await call(server.url, 'POST', '/api/station/requests', { track_id: 'Nobody/Nothing/00 none.mp3' }, auth)
    expect(missing.status).toBe(404)
    expect(missing.body.detail).toMatch(/no track Nobody\/Nothing\/00 none\.mp3 in the library/)
    const heard = listen(`${server.url}/stream`, 30)
    const at = new Date().toISOString()
    const r = await call(server.url, 'POST', '/api/station/requests', { track_id: wanted.id }, auth)
    expect(r.status).toBe(200)
    // first in line, or second while a change of track is fading (the track fading in keeps its place)
    expect([1, 2]).toContain(r.body.position)
    if (r.body.position === 1) expect(r.body.up_next.id).toBe(wanted.id)
    expect((await station()).requests.map((t: { id: string }) => t.id)).toEqual([wanted.id])
    // the history: the request went on air next, at most after the one change already under way (the
    // track may have played before the request too, so only plays since it count)
    type Play = { track: { id: string }; started_at: string; by: string }
    const playsSince = async () =>
      ((await call(server.url, 'GET', '/api/station/history')).body.plays as Play[]).filter((p) => p.started_at > at).reverse()
    await expect.poll(async () => (await playsSince()).some((p) => p.track.id === wanted.id), { timeout: 20_000 }).toBe(true)
    const since = await playsSince()
    const i = since.findIndex((p) => p.track.id === wanted.id)
    expect(i).toBeLessThanOrEqual(1)
    expect(since[i].by).toBe('request')
    // and the listener heard it, by its title
    const titles = (await heard).titles.map((t) => t.title)
    expect(titles).toContain(streamTitle({ ...wanted, album: '', duration_s: 0, bpm: null, key: null }))
    expect((await station()).requests).toEqual([])
  })

  test('skip needs the token and fades into the next track at once; a second skip during the fade is refused', async () => {
    expect((await call(server.url, 'POST', '/api/station/skip')).status).toBe(401)
    const t0 = Date.now()
    // the test before may leave a change of track fading (a second at this pace): a skip then is the
    // refusal this test checks below, so wait for the fade to end
    let r = await call(server.url, 'POST', '/api/station/skip', undefined, auth)
    await expect
      .poll(async () => (r.status === 409 ? (r = await call(server.url, 'POST', '/api/station/skip', undefined, auth)) : r).status, {
        timeout: 10_000,
      })
      .toBe(200)
    const again = await call(server.url, 'POST', '/api/station/skip', undefined, auth)
    expect(again.status).toBe(409)
    expect(again.body.detail).toMatch(/already under way/)
    await expect.poll(async () => (await station()).on_air.track.id, { timeout: 10_000 }).toBe(r.body.next.id)
    // well before the skipped track would have ended (12 s of audio at 4x: 3 s)
    const history = (await call(server.url, 'GET', '/api/station/history?limit=4')).body.plays
    const said = `reply ${JSON.stringify(r.body)}; history ${JSON.stringify(history.map((p: { track: { id: string }; started_at: string }) => [p.track.id, p.started_at]))}; log ${server.stderr().split('\n').slice(-12).join(' | ')}`
    // the skip fades into another track (three CI runs of 2026-11-27 and 28 saw a track picked to
    // follow itself after the request above, counted where it was asked for: lineup.ts), and the
    // skipped one played right before it
    expect(r.body.next.id, said).not.toBe(r.body.skipped.id)
    expect(history[0].track.id, said).toBe(r.body.next.id)
    expect(history[1].track.id, said).toBe(r.body.skipped.id)
    expect(Date.now() - t0).toBeLessThan(10_000)
  })

  test('a track copied into the folder joins the library (and can be requested); removed, it leaves', async () => {
    const demo = await demoLibrary(SECONDS, 6)
    cpSync(join(demo.dir, spare), join(dir, spare))
    const ids = async () => ((await call(server.url, 'GET', '/api/station/library')).body.tracks as { id: string }[]).map((t) => t.id)
    await expect.poll(ids, { timeout: 20_000 }).toContain(spare)
    expect((await call(server.url, 'POST', '/api/station/requests', { track_id: spare }, auth)).status).toBe(200)
    rmSync(join(dir, spare))
    await expect.poll(ids, { timeout: 20_000 }).not.toContain(spare)
    expect(server.stderr()).toMatch(/library rescanned: 6 tracks \(1 new, 0 gone\)/)
    expect(server.stderr()).toMatch(/library rescanned: 5 tracks \(0 new, 1 gone\)/)
  })
})

// The station end to end: the demo library scanned, `crystal serve --music` on air, and a real
// listener on /stream decoding a minute of it (gaps, loudness per track, titles); no library is an error.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { streamTitle } from '../../engine/contracts/station.js'
import { call, demoLibrary, runCrystal, startServer, type RunningServer } from '../../testing/services.js'
import { decodeMp3, RATE, trimSilence } from './audio.js'
import type { DemoTrack } from './demo.js'
import { scanLibrary } from './library.js'
import { listen, longestSilenceMs, loudnessPerTitle } from './listener.js'
import { integratedLoudness } from './loudness.js'

// short tracks so that a minute of stream crosses several track changes
const SECONDS = 14
const CROSSFADE_S = 2
// the stream is paced 4x faster than real time, so the minute takes some 15 s of the test's time;
// everything else (decoder, mixer, encoder, ICY) is what runs on air
const PACE = 4
const dir = mkdtempSync(join(tmpdir(), 'crystal-music-'))
let tracks: DemoTrack[]

beforeAll(async () => {
  const demo = await demoLibrary(SECONDS, 4)
  tracks = demo.tracks
  cpSync(demo.dir, dir, { recursive: true })
  const album = join(dir, tracks[0].artist, tracks[0].album)
  // not an MP3 at all, where the library expects one: reported and skipped by the scan
  writeFileSync(join(album, '99 broken.mp3'), Buffer.from('this is not audio'.repeat(100)))
  // a real MP3 cut off after a tenth of a second (its tag left out): the scan takes it, the station
  // finds it unplayable when it comes up and plays another in time
  const first = readFileSync(join(album, '01 Europium Dawn.mp3'))
  const tag = 10 + ((first[6] << 21) | (first[7] << 14) | (first[8] << 7) | first[9])
  writeFileSync(join(album, '03 truncated.mp3'), first.subarray(tag, tag + 2000))
})

describe('the library', () => {
  test('scans <artist>/<album>/*.mp3 with tags (UTF-8 kept) and exact durations; an unreadable file is reported and skipped', async () => {
    const lib = await scanLibrary(dir)
    const tagged = lib.tracks.filter((t) => t.bpm !== null)
    expect(tagged.map((t) => [t.artist, t.title, t.bpm, t.key])).toEqual(tracks.map((t) => [t.artist, t.title, t.bpm, t.key]))
    expect(lib.tracks.some((t) => t.artist === 'Señal Fría')).toBe(true)
    // the encoder's delay and padding add some 40 ms to the synthesised length
    for (const t of tagged) expect(Math.abs(t.duration_s - SECONDS)).toBeLessThan(0.1)
    // without tags, the names come from the folders and the file
    expect(lib.tracks.find((t) => t.bpm === null)).toMatchObject({
      artist: tracks[0].artist,
      album: tracks[0].album,
      title: '03 truncated',
    })
    expect(lib.skipped).toHaveLength(1)
    expect(lib.skipped[0].file).toContain('99 broken.mp3')
  })

  test('no music directory, or none with a playable track, is a clear error', async () => {
    await expect(scanLibrary(join(dir, 'nope'))).rejects.toThrow(/music directory .*nope does not exist/)
    const empty = mkdtempSync(join(tmpdir(), 'crystal-empty-'))
    await expect(scanLibrary(empty)).rejects.toThrow(/no playable MP3 in/)
    const file = join(empty, 'library.json')
    writeFileSync(file, '{}')
    await expect(scanLibrary(file)).rejects.toThrow(/music directory .*library\.json is a file, not a directory/)
    const r = await runCrystal(['serve', '--port', '0', '--size', '16', '--music', join(dir, 'nope')], { SVC_CRYSTAL_DATA_DIR: empty })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/music directory .*nope does not exist \(expected .*<artist>\/<album>\/\*\.mp3/)
  })
})

describe('on air', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer(['--music', dir], { SVC_STATION_PACE: String(PACE), SVC_STATION_CROSSFADE_S: String(CROSSFADE_S) })
  })
  afterAll(() => server?.stop())

  test('a listener decodes 60 s across track changes: no gap over 50 ms, every track within 1 LU of -16 LUFS, titles change with the track; a corrupt MP3 costs no air', async () => {
    const heard = await listen(`${server.url}/stream`, 60)
    expect(heard.left.length).toBeGreaterThanOrEqual(60 * RATE)
    // no dead air and no gap between tracks anywhere in the minute
    expect(longestSilenceMs(heard)).toBeLessThan(50)
    // titles: at least two changes, each a library track, never the same twice in a row
    const names = new Set(tracks.map((t) => streamTitle({ ...t, id: '', duration_s: 0 })))
    const titles = heard.titles.map((t) => t.title)
    expect(titles.length).toBeGreaterThanOrEqual(3)
    for (const t of titles) expect(names.has(t)).toBe(true)
    for (let i = 1; i < titles.length; i++) expect(titles[i]).not.toBe(titles[i - 1])
    // loudness of each track as heard (crossfades and the title's lag left out)
    const measured = loudnessPerTitle(heard, CROSSFADE_S / 2 + 0.8)
    expect(measured.length).toBeGreaterThanOrEqual(3)
    for (const m of measured) expect(Math.abs(m.lufs + 16), `${m.title}: ${m.lufs.toFixed(2)} LUFS`).toBeLessThan(1)
    // the control: the same tracks as files differ by far more than the 2 LU the stream allows
    const raw = await Promise.all(
      (await scanLibrary(dir)).tracks.map(async (t) => {
        const pcm = trimSilence(await decodeMp3(readFileSync(join(dir, t.id)), t.id))
        return integratedLoudness([pcm.left, pcm.right], RATE)
      }),
    )
    expect(Math.max(...raw) - Math.min(...raw)).toBeGreaterThan(8)
    // the station says the same: nothing had to be filled with silence, one file skipped
    const state = await call(server.url, 'GET', '/api/station')
    expect(state.status).toBe(200)
    expect(state.body.underruns).toBe(0)
    expect(state.body.library).toMatchObject({ tracks: 5, skipped: 1 })
    expect(server.stderr()).toMatch(/skipped .*99 broken\.mp3/)
    // the cut-off file came up (third in line) and was passed over, with no silence for it above
    expect(server.stderr()).toMatch(/skipping .*03 truncated\.mp3: shorter than one second/)
  })

  test('a client that does not ask for ICY metadata gets plain MP3; the listener count follows', async () => {
    const res = await fetch(`${server.url}/stream`)
    expect(res.headers.get('content-type')).toBe('audio/mpeg')
    expect(res.headers.get('icy-metaint')).toBeNull()
    const reader = res.body!.getReader()
    const first = (await reader.read()).value!
    // an MPEG audio frame sync (11 set bits) within the first bytes: no metadata in front
    const sync = first.findIndex((b, i) => b === 0xff && (first[i + 1] & 0xe0) === 0xe0)
    expect(sync).toBeGreaterThanOrEqual(0)
    expect((await call(server.url, 'GET', '/api/station')).body.listeners).toBe(1)
    await reader.cancel()
    await expect.poll(async () => (await call(server.url, 'GET', '/api/station')).body.listeners).toBe(0)
  })
})

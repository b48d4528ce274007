// The station's medium in the running server: the demo library perceived off the event loop and
// written into the medium, then every pick made by it, in the dream state the block asks for; and
// `crystal perceive` on a file and on the station's own stream.
import { afterAll, expect, test } from 'vitest'
import { BLOCKS, type BlockName } from '../../engine/station/schedule.js'
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, demoLibrary, runCrystal, startServer, type RunningServer } from '../../testing/services.js'

let server: RunningServer | undefined
afterAll(() => server?.stop())

test('the library goes into the medium while the station plays; then the medium picks, awake or dreaming as the block says', async () => {
  const { dir } = await demoLibrary(14, 4)
  server = await startServer(['--music', dir], { SVC_STATION_PACE: '4' })
  const station = async () => (await call(server!.url, 'GET', '/api/station')).body
  // on air at once, chosen by the rules while the library is being perceived
  expect((await station()).on_air).not.toBeNull()
  await expect
    .poll(() => server!.stderr(), { timeout: 90_000, interval: 500 })
    .toMatch(/station: 4 tracks perceived and written into the medium \((awake|light|deep)\)/)
  expect((await station()).selection.traces).toBe(4)
  // the first pick after that puts the medium in the block's state and is the medium's
  await expect
    .poll(
      async () => {
        const s = await station()
        const want = BLOCKS[s.block as BlockName].speak_when
        return s.selection.medium === want && s.selection.by !== null
      },
      { timeout: 90_000, interval: 500 },
    )
    .toBe(true)
  const s = await station()
  expect(['mood', 'cluster', 'recency']).toContain(s.selection.by)
  expect(s.underruns).toBe(0)
}, 200_000)

test('crystal perceive: a demo file reads its tagged tempo and key; the stream URL gives 296 numbers; a missing file is a clear error', async () => {
  const { dir, tracks } = await demoLibrary(14, 4)
  const t = tracks[0] // Europium Dawn: 120 BPM, A major
  const file = await runCrystal(['perceive', join(dir, t.artist, t.album, `01 ${t.title}.mp3`), '--json'])
  expect(file.status, file.stderr).toBe(0)
  const f = JSON.parse(file.stdout).features
  expect(Math.abs(f.tempo - t.bpm)).toBeLessThan(2)
  // the key's triad, A C# E, holds the three strongest pitch classes
  expect(
    new Set(
      f.chroma
        .map((v: number, i: number) => [v, i])
        .sort((a: number[], b: number[]) => b[0] - a[0])
        .slice(0, 3)
        .map((p: number[]) => p[1]),
    ),
  ).toEqual(new Set([9, 1, 4]))
  const stream = await runCrystal(['perceive', `${server!.url}/stream`, '--seconds', '3', '--json'])
  expect(stream.status, stream.stderr).toBe(0)
  expect(JSON.parse(stream.stdout).length).toBe(296)
  const missing = await runCrystal(['perceive', join(dir, 'no such.mp3')])
  expect(missing.status).toBe(1)
  expect(missing.stderr).toContain('no such.mp3: no such file')
}, 60_000)

test('a library of one track has nothing to rank: the medium says none and the rules pick', async () => {
  const { dir, tracks } = await demoLibrary(14, 4)
  const one = mkdtempSync(join(tmpdir(), 'crystal-one-'))
  const t = tracks[0]
  cpSync(join(dir, t.artist, t.album, `01 ${t.title}.mp3`), join(one, t.artist, t.album, `01 ${t.title}.mp3`))
  const lone = await startServer(['--music', one], { SVC_STATION_PACE: '4' })
  try {
    await expect
      .poll(() => lone.stderr(), { timeout: 60_000, interval: 500 })
      .toContain('station: 1 track perceived; selection stays with the rules and recency')
    const s = (await call(lone.url, 'GET', '/api/station')).body
    expect(s.selection).toMatchObject({ medium: 'none', traces: 0 })
    expect(s.on_air.track.title).toBe(t.title)
  } finally {
    await lone.stop()
  }
}, 90_000)

// The station's medium in the running server: the demo library perceived off the event loop and
// written into the medium, then every pick made by it, in the dream state the block asks for.
import { afterAll, expect, test } from 'vitest'
import { BLOCKS, type BlockName } from '../../engine/station/schedule.js'
import { call, demoLibrary, startServer, type RunningServer } from '../testing.js'

let server: RunningServer | undefined
afterAll(() => server?.stop())

test('the library goes into the medium while the station plays; then the medium picks, awake or dreaming as the block says', async () => {
  const { dir } = await demoLibrary(14, 4)
  server = await startServer(['--music', dir], { SVC_STATION_PACE: '4' })
  const station = async () => (await call(server!.url, 'GET', '/api/station')).body
  // on air at once, chosen by the rules while the library is being perceived
  expect((await station()).on_air).not.toBeNull()
  await expect.poll(async () => (await station()).selection.traces, { timeout: 90_000, interval: 500 }).toBe(4)
  expect(server.stderr()).toContain('station: 4 tracks perceived and written into the medium')
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

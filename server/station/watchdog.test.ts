// The silence watchdog: a track with a 6 s hole in it goes off air 3 s into the hole, and the next
// track fades in; the hole itself (the control) is twice as long as what reaches the listener.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MPEGDecoder } from 'mpg123-decoder'
import { expect, test } from 'vitest'
import { demoLibrary } from '../../testing/services.js'
import { FRAME, RATE, StreamEncoder } from './audio.js'
import { scanLibrary } from './library.js'
import { longestSilenceMs } from './listener.js'
import { Station, WATCHDOG_S } from './station.js'

const HOLE_S = 6

async function holeyMp3(): Promise<Buffer> {
  const n = 12 * RATE
  const x = Float32Array.from({ length: n }, (_, i) =>
    i < 3 * RATE || i >= (3 + HOLE_S) * RATE ? 0.1 * Math.sin((2 * Math.PI * 330 * i) / RATE) : 0,
  )
  const enc = await StreamEncoder.create()
  const parts: Uint8Array[] = []
  for (let i = 0; i < n; i += FRAME) parts.push(enc.encode(x.subarray(i, i + FRAME), x.subarray(i, i + FRAME)))
  parts.push(enc.flush())
  return Buffer.concat(parts)
}

test(`over ${WATCHDOG_S} s of silence on air: the watchdog moves on, so a ${HOLE_S} s hole is cut to ${WATCHDOG_S} s`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-music-'))
  const demo = await demoLibrary(14, 4)
  cpSync(demo.dir, dir, { recursive: true })
  // first in library order, so it plays first
  const holey = join(dir, 'AAA', 'Holes')
  mkdirSync(holey, { recursive: true })
  writeFileSync(join(holey, '01 hole.mp3'), await holeyMp3())
  const lines: string[] = []
  const station = new Station({ library: await scanLibrary(dir), pace: 8, crossfade_s: 1, say: (l) => lines.push(l) })
  const decoder = new MPEGDecoder()
  await decoder.ready
  const heard: Float32Array[] = []
  let samples = 0
  await station.start()
  const out = station.broadcast.listen(false)
  await new Promise<void>((resolve) => {
    out.on('data', (b: Buffer) => {
      const d = decoder.decode(b)
      if (d.samplesDecoded) heard.push(d.channelData[0]), (samples += d.samplesDecoded)
      if (samples > 14 * RATE) resolve()
    })
  })
  station.stop()
  decoder.free()
  const left = new Float32Array(samples)
  heard.reduce((at, p) => (left.set(p, at), at + p.length), 0)
  const longest = longestSilenceMs({ left, right: left })
  expect(longest).toBeGreaterThan(WATCHDOG_S * 1000 - 100)
  expect(longest).toBeLessThan(WATCHDOG_S * 1000 + 300)
  expect(station.status().watchdog_trips).toBe(1)
  expect(lines.join('\n')).toMatch(/3 s of silence on air; moving on from AAA\/Holes\/01 hole\.mp3/)
  expect(station.status().on_air?.track.id).not.toBe('AAA/Holes/01 hole.mp3')
})

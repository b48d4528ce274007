// Perception on the demo library, whose tempi and keys are known by construction: each decoded track
// reads its tagged tempo within 2 BPM, and its three strongest pitch classes are its key's triad.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { at, chroma, perceive, tempo } from '../../engine/station/perception.js'
import { demoLibrary } from '../../testing/services.js'
import { decodeMp3, RATE, trimSilence } from './audio.js'
import { scanLibrary } from './library.js'
import { perceiveFile } from './perception.js'

const NAMES = ['C', 'C#', 'D', 'Eb', 'E', 'F', 'F#', 'G', 'Ab', 'A', 'Bb', 'B']
/** The pitch classes of a key's triad (TKEY form: A, F#m, Bb ...). */
const triad = (key: string) => {
  const minor = key.endsWith('m')
  const root = NAMES.indexOf(minor ? key.slice(0, -1) : key)
  return new Set([0, minor ? 3 : 4, 7].map((s) => (root + s) % 12))
}

test('the demo tracks, decoded from MP3, read their tagged tempo within 2 BPM and their key as the top three chroma', async () => {
  const { dir } = await demoLibrary(14, 4)
  const tracks = (await scanLibrary(dir)).tracks
  const read = await Promise.all(
    tracks.map(async (t) => {
      const pcm = trimSilence(await decodeMp3(readFileSync(join(dir, t.id)), t.id))
      const mono = pcm.left.map((v, i) => (v + pcm.right[i]) / 2)
      const c = chroma(mono, RATE)
      const top = new Set(
        c
          .map((v, i) => [v, i])
          .sort((a, b) => b[0] - a[0])
          .slice(0, 3)
          .map(([, i]) => i),
      )
      return { t, bpm: tempo(mono, RATE), top }
    }),
  )
  for (const { t, bpm, top } of read) {
    expect(Math.abs(bpm - t.bpm!), `${t.title}: ${bpm.toFixed(1)} BPM, tagged ${t.bpm}`).toBeLessThan(2)
    expect(top, t.title).toEqual(triad(t.key!))
    // the control: no other track's key fits (the four keys have four different triads)
    for (const other of read) if (other.t.key !== t.key) expect(top).not.toEqual(triad(other.t.key!))
  }
})

test('perception hears each track as it plays: the demo files differ by more than 8 dB, their perceived levels by under 1 dB', async () => {
  const { dir } = await demoLibrary(14, 4)
  const tracks = (await scanLibrary(dir)).tracks
  const heard = await Promise.all(tracks.map((t) => perceiveFile(dir, t.id)))
  // the control: the same files perceived raw, as decoded
  const raw = await Promise.all(
    tracks.map(async (t) => {
      const pcm = trimSilence(await decodeMp3(readFileSync(join(dir, t.id)), t.id))
      return perceive(
        pcm.left.map((v, i) => (v + pcm.right[i]) / 2),
        RATE,
      )
    }),
  )
  const spread = (vs: Float64Array[]) => Math.max(...vs.map((v) => v[at('rms_mean')])) - Math.min(...vs.map((v) => v[at('rms_mean')]))
  expect(spread(raw)).toBeGreaterThan(8)
  expect(spread(heard)).toBeLessThan(1)
  for (const [i, t] of tracks.entries()) expect(Math.abs(heard[i][at('tempo')] - t.bpm!)).toBeLessThan(2)
})

// A demo library of synthesised tracks at known tempi and keys (a chord pad on the key's triad and a
// kick on every beat), tagged and encoded to MP3, so a new user hears the station at once; so do the tests.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FRAME, RATE, StreamEncoder } from './audio.js'

export interface DemoTrack {
  artist: string
  album: string
  title: string
  bpm: number
  /** the key as ID3's TKEY writes it: a note name, "m" for minor (A, F#m, Bb) */
  key: string
  seconds: number
  /** the pad and kick level; tracks differ by design, so normalisation has work to do */
  level_db: number
}

const NOTES = ['C', 'C#', 'D', 'Eb', 'E', 'F', 'F#', 'G', 'Ab', 'A', 'Bb', 'B']

/** The default demo set: four artists (one with a non-ASCII name), eight tempi and keys, levels
 * from -22 to -8 dB so that the raw tracks differ by some 14 LU before normalisation. */
export function demoTracks(seconds = 40, count = 8): DemoTrack[] {
  const set: Omit<DemoTrack, 'seconds'>[] = [
    { artist: 'Lattice Choir', album: 'First Light', title: 'Europium Dawn', bpm: 120, key: 'A', level_db: -14 },
    { artist: 'Lattice Choir', album: 'First Light', title: 'Standing Echo', bpm: 96, key: 'Dm', level_db: -22 },
    { artist: 'Señal Fría', album: 'Cavidad', title: 'Órbita Lenta', bpm: 84, key: 'F#m', level_db: -10 },
    { artist: 'Señal Fría', album: 'Cavidad', title: 'Phase Knot', bpm: 128, key: 'E', level_db: -18 },
    { artist: 'Graphene Model', album: 'Soft Saturation', title: 'Harmonic Bridge', bpm: 110, key: 'C', level_db: -8 },
    { artist: 'Graphene Model', album: 'Soft Saturation', title: 'Memory Seed', bpm: 140, key: 'Bbm', level_db: -16 },
    { artist: 'Quiet Boundary', album: 'Sponge Layer', title: 'Attractor Field', bpm: 72, key: 'G', level_db: -20 },
    { artist: 'Quiet Boundary', album: 'Sponge Layer', title: 'Echo Ring', bpm: 100, key: 'Ebm', level_db: -12 },
  ]
  return Array.from({ length: count }, (_, i) => ({
    ...set[i % set.length],
    title: i < set.length ? set[i].title : `${set[i % set.length].title} ${Math.floor(i / set.length) + 1}`,
    seconds,
  }))
}

/** The track's stereo samples at the stream's rate. */
export function synthesise(t: DemoTrack): { left: Float32Array; right: Float32Array } {
  const n = Math.round(t.seconds * RATE)
  const left = new Float32Array(n)
  const right = new Float32Array(n)
  const minor = t.key.endsWith('m')
  const root = NOTES.indexOf(minor ? t.key.slice(0, -1) : t.key)
  if (root < 0) throw new Error(`unknown key ${t.key}`)
  // the triad around A3 (220 Hz), each note with two overtones
  const freqs = [0, minor ? 3 : 4, 7].map((s) => 220 * 2 ** ((root - 9 + s) / 12))
  const beat = 60 / t.bpm
  const gain = 10 ** (t.level_db / 20)
  let seed = (t.bpm * 2654435761) >>> 0
  for (let i = 0; i < n; i++) {
    const time = i / RATE
    const sinceBeat = time % beat
    // the pad swells a little with each beat so the level never drops to silence
    const swell = 0.75 + 0.25 * Math.exp(-sinceBeat / (beat / 2))
    let pad = 0
    for (const f of freqs)
      pad += Math.sin(2 * Math.PI * f * time) + 0.3 * Math.sin(4 * Math.PI * f * time) + 0.1 * Math.sin(6 * Math.PI * f * time)
    pad *= swell / freqs.length
    const kick = Math.sin(2 * Math.PI * 55 * sinceBeat) * Math.exp(-sinceBeat / 0.08)
    seed = (seed * 1664525 + 1013904223) >>> 0
    const click = sinceBeat < 0.005 ? ((seed / 2 ** 32) * 2 - 1) * (1 - sinceBeat / 0.005) : 0
    // a 20 ms fade at each end, so a track does not start or stop with a click
    const edge = Math.min(1, time / 0.02, (t.seconds - time) / 0.02)
    const mono = gain * edge * (0.5 * pad + 0.6 * kick + 0.3 * click)
    left[i] = mono * (1 + 0.1 * Math.sin(2 * Math.PI * 0.1 * time))
    right[i] = mono * (1 - 0.1 * Math.sin(2 * Math.PI * 0.1 * time))
  }
  return { left, right }
}

/** An ID3v2.4 tag of UTF-8 text frames (title, artist, album, BPM, key). */
export function id3(frames: Record<string, string>): Buffer {
  const syncsafe = (n: number) => Buffer.from([(n >> 21) & 127, (n >> 14) & 127, (n >> 7) & 127, n & 127])
  const body = Buffer.concat(
    Object.entries(frames).map(([id, text]) => {
      const data = Buffer.concat([Buffer.from([3]), Buffer.from(text, 'utf8')]) // 3: UTF-8
      return Buffer.concat([Buffer.from(id, 'latin1'), syncsafe(data.length), Buffer.from([0, 0]), data])
    }),
  )
  return Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0]), syncsafe(body.length), body])
}

/** Encodes one track to a tagged MP3 file's bytes. */
export async function demoMp3(t: DemoTrack): Promise<Buffer> {
  const { left, right } = synthesise(t)
  const enc = await StreamEncoder.create()
  const parts: Uint8Array[] = []
  for (let i = 0; i < left.length; i += FRAME) parts.push(enc.encode(left.subarray(i, i + FRAME), right.subarray(i, i + FRAME)))
  parts.push(enc.flush())
  return Buffer.concat([id3({ TIT2: t.title, TPE1: t.artist, TALB: t.album, TBPM: String(t.bpm), TKEY: t.key }), ...parts])
}

/** Writes the tracks as DIR/<artist>/<album>/NN <title>.mp3; returns the files written. */
export async function writeDemoLibrary(dir: string, tracks: DemoTrack[] = demoTracks()): Promise<string[]> {
  const files: string[] = []
  for (const [i, t] of tracks.entries()) {
    const folder = join(dir, t.artist, t.album)
    mkdirSync(folder, { recursive: true })
    const file = join(folder, `${String(i + 1).padStart(2, '0')} ${t.title}.mp3`)
    writeFileSync(file, await demoMp3(t))
    files.push(file)
  }
  return files
}

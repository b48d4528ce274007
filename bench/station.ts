// The station's speed: real-time factor of decode + loudness + mix + encode on one core (target 20x),
// time from `crystal serve --music` to a listener's first audio byte (target 3 s), and the server's
// CPU share while streaming in real time (target 10% of one core), beside the same server without the station.
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { demoLibrary, startServer } from './harness.js'
import { importOptional } from '../engine/util/optional.node.js'
import { decodeMp3, FRAME, RATE, StreamEncoder, trimSilence, type Pcm } from '../server/station/audio.js'
import { scanLibrary } from '../server/station/library.js'
import { level } from '../server/station/loudness.js'
import { Mixer } from '../server/station/mixer.js'

export interface StationBenchReport {
  audio_seconds: number
  /** CPU seconds per stage, and audio seconds per CPU second for the whole chain */
  stages_s: { decode: number; loudness: number; mix: number; encode: number }
  realtime_factor: number
  /** the control: the same frames through the pure-JS lamejs, the encoder the station had before */
  encode_lamejs_s: number
  realtime_factor_lamejs: number
  start_to_listening_ms: number
  /** the control: the same server, no station */
  start_to_listening_without_station_ms: number
  start_to_first_byte_ms: number
  /** start until the library is perceived (in a worker) and written into the medium */
  start_to_medium_ms: number
  cpu_share_streaming: number
  cpu_share_without_station: number
  sample_seconds: number
}

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
}

async function cpuShare(pid: number, seconds: number): Promise<number> {
  const c0 = cpuSeconds(pid)
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, seconds * 1000))
  return (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000)
}

/** CPU milliseconds this process has used: the stages are timed by CPU, not by the wall clock, so
 * that other work on a shared machine does not count against them. */
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export async function runStationBench(say: (what: string) => void): Promise<StationBenchReport> {
  say('writing the demo library (8 tracks of 40 s) ...')
  const { dir } = await demoLibrary(40, 8)
  const library = await scanLibrary(dir)

  say('decode, loudness, mix and encode the whole library on this thread ...')
  const stages = { decode: 0, loudness: 0, mix: 0, encode: 0 }
  const decks: Pcm[] = []
  for (const t of library.tracks) {
    let t0 = cpuMs()
    const pcm = trimSilence(await decodeMp3(await readFile(join(dir, t.id)), t.id))
    stages.decode += cpuMs() - t0
    t0 = cpuMs()
    const channels = [pcm.left.slice(), pcm.right.slice()]
    level(channels, RATE)
    stages.loudness += cpuMs() - t0
    decks.push({ left: channels[0], right: channels[1] })
  }
  let queued = 1
  let wanted = false
  const mixer: Mixer<number> = new Mixer<number>(4 * RATE, {
    want: () => void (wanted = true),
    onAir: () => undefined,
    underrun: () => undefined,
  })
  mixer.cue({ item: 0, pcm: decks[0] })
  const encoder = await StreamEncoder.create()
  // the control's encoder, a dev dependency: loaded only here, and named when it is not installed
  const { Mp3Encoder } = await importOptional<typeof import('@breezystack/lamejs')>(
    '@breezystack/lamejs',
    "the station benchmark's control (lamejs encoding)",
  )
  const control = new Mp3Encoder(2, RATE, 128)
  const l16 = new Int16Array(FRAME)
  const r16 = new Int16Array(FRAME)
  let lamejs = 0
  let frames = 0
  // every deck through the mix with 4 s crossfades, until the last one runs out
  while (!(queued >= decks.length && mixer.starved)) {
    let t0 = cpuMs()
    if (wanted && queued < decks.length) (wanted = false), mixer.cue({ item: queued, pcm: decks[queued++] })
    const { left, right } = mixer.frame()
    stages.mix += cpuMs() - t0
    t0 = cpuMs()
    encoder.encode(left, right)
    stages.encode += cpuMs() - t0
    t0 = cpuMs()
    for (let i = 0; i < FRAME; i++)
      (l16[i] = Math.round(Math.max(-1, Math.min(1, left[i])) * 32767)), (r16[i] = Math.round(Math.max(-1, Math.min(1, right[i])) * 32767))
    control.encodeBuffer(l16, r16)
    lamejs += cpuMs() - t0
    frames++
  }
  const total = frames * FRAME
  const audio_seconds = total / RATE
  const rest = (stages.decode + stages.loudness + stages.mix) / 1000
  const wall = rest + stages.encode / 1000

  say('start to first byte: crystal serve --music, then GET /stream ...')
  const t0 = performance.now()
  const server = await startServer(['--music', dir])
  const listening = performance.now() - t0
  const res = await fetch(`${server.url}/stream`)
  const reader = res.body!.getReader()
  await reader.read()
  const firstByte = performance.now() - t0
  await reader.cancel()
  // streaming's share is measured once the one-off perception of the library is done
  while ((await (await fetch(`${server.url}/api/station`)).json()).selection.medium === 'perceiving')
    await new Promise((r) => setTimeout(r, 100))
  const medium = performance.now() - t0
  const sample = 10
  say(`CPU share while streaming in real time (${sample} s) ...`)
  const streaming = await cpuShare(server.child.pid!, sample)
  await server.stop()
  say(`the control: the same server without the station (${sample} s) ...`)
  const t1 = performance.now()
  const bare = await startServer([])
  const bareListening = performance.now() - t1
  await new Promise((r) => setTimeout(r, 1000))
  const without = await cpuShare(bare.child.pid!, sample)
  await bare.stop()
  return {
    audio_seconds,
    stages_s: { decode: stages.decode / 1000, loudness: stages.loudness / 1000, mix: stages.mix / 1000, encode: stages.encode / 1000 },
    realtime_factor: audio_seconds / wall,
    encode_lamejs_s: lamejs / 1000,
    realtime_factor_lamejs: audio_seconds / (rest + lamejs / 1000),
    start_to_listening_ms: listening,
    start_to_listening_without_station_ms: bareListening,
    start_to_first_byte_ms: firstByte,
    start_to_medium_ms: medium,
    cpu_share_streaming: streaming,
    cpu_share_without_station: without,
    sample_seconds: sample,
  }
}

export function stationTable(r: StationBenchReport): object[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`
  return [
    {
      measure: `real-time factor, decode + loudness + mix + encode (${r.audio_seconds.toFixed(0)} s of audio, CPU time of one thread)`,
      figure: `${r.realtime_factor.toFixed(1)}x`,
      target: '>= 20x',
      control: `with lamejs (pure JS) encoding the same frames: ${r.realtime_factor_lamejs.toFixed(1)}x; stages: decode ${r.stages_s.decode.toFixed(2)} s, loudness ${r.stages_s.loudness.toFixed(2)} s, mix ${r.stages_s.mix.toFixed(2)} s, encode ${r.stages_s.encode.toFixed(2)} s (lamejs ${r.encode_lamejs_s.toFixed(2)} s)`,
    },
    {
      measure: 'start to first audio byte (crystal serve --music, then GET /stream)',
      figure: `${(r.start_to_first_byte_ms / 1000).toFixed(2)} s`,
      target: '< 3 s',
      control: `listening after ${(r.start_to_listening_ms / 1000).toFixed(2)} s; without the station ${(r.start_to_listening_without_station_ms / 1000).toFixed(2)} s`,
    },
    {
      measure: 'start to the library perceived and in the medium (a worker thread, while on air)',
      figure: `${(r.start_to_medium_ms / 1000).toFixed(2)} s`,
      target: '',
      control: `first audio byte at ${(r.start_to_first_byte_ms / 1000).toFixed(2)} s`,
    },
    {
      measure: `CPU share while streaming in real time (${r.sample_seconds} s, after the medium is written)`,
      figure: pct(r.cpu_share_streaming),
      target: '< 10% of one core',
      control: `same server, no station: ${pct(r.cpu_share_without_station)}`,
    },
  ]
}

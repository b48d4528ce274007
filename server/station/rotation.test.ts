// Does the mood choose? The demo library (8 tracks of 40 s) perceived and written into the station's
// medium as on air, then a Morning Drift of picks by the rules and the medium, beside the same picks
// with the mood's axes shuffled and with the field erased (the controls), measured against the rules
// with a direct comparison of the perceptions as their ranking (the oracle, never the station's way).
import { beforeAll, describe, expect, test } from 'vitest'
import type { Track } from '../../engine/contracts/station.js'
import { createNodeEngine } from '../../engine/node.js'
import { MEDIUM_MATERIAL, MEDIUM_SIZE, moodVector, StationMedium } from '../../engine/station/medium.js'
import { libraryStatistics, standardise } from '../../engine/station/perception.js'
import { BLOCKS, type Block } from '../../engine/station/schedule.js'
import { blockPool, pickNext } from '../../engine/station/selection.js'
import { cosine } from '../../engine/util/vector.js'
import { demoLibrary } from '../../testing/services.js'
import { scanLibrary } from './library.js'
import { CODEBOOK_SEED, perceiveFile } from './perception.js'

const PICKS = 30

/** Wilson's 95% interval of k successes in n. */
function wilson(k: number, n: number): [number, number] {
  const z = 1.96
  const p = k / n
  const mid = (p + (z * z) / (2 * n)) / (1 + (z * z) / n)
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))
  return [mid - half, mid + half]
}

describe('rotation with the demo library', () => {
  let tracks: Track[]
  let Z: Map<string, Float64Array>
  beforeAll(async () => {
    const { dir } = await demoLibrary(40, 8)
    tracks = (await scanLibrary(dir)).tracks
    const raw = new Map<string, Float64Array>()
    for (const t of tracks) raw.set(t.id, await perceiveFile(dir, t.id))
    const stats = libraryStatistics([...raw.values()])
    Z = new Map([...raw].map(([id, v]) => [id, standardise(v, stats)]))
  }, 600_000)

  /** The library written into a medium, as on air; each test has its own (the controls erase it). */
  async function writtenMedium(): Promise<StationMedium> {
    const medium = new StationMedium(
      await createNodeEngine({ size: MEDIUM_SIZE, material: MEDIUM_MATERIAL, backend: 'cpu', seed: CODEBOOK_SEED }),
      CODEBOOK_SEED,
    )
    for (const t of tracks) await medium.write(t.id, Z.get(t.id)!)
    await medium.echo()
    return medium
  }

  /** The oracle's ranking for a block: the cosine of each perception with its mood, shifted positive so
   * that the rules rank by it alone (no noise floor, nothing opposed). */
  const oracle = (block: Block) => new Map(tracks.map((t) => [t.id, 2 + cosine(Z.get(t.id)!, moodVector(block.mood))]))
  const shuffle = (b: Block): Block => {
    const m = b.mood
    return { ...b, mood: { energy: m.warmth, brightness: m.tension, tension: m.brightness, warmth: m.energy } }
  }

  test("Morning Drift's mood chooses: its favourite plays as often as the window allows and the picks agree with the oracle more than the mood's axes shuffled do; every track of the band plays in all three runs", async () => {
    const medium = await writtenMedium()
    const morning = BLOCKS['Morning Drift']
    const pool = blockPool(tracks, morning).map((t) => t.id)
    // the oracle: the same rules, ranked by the cosine of each perception with the block's own mood
    const direct = oracle(morning)
    const run = async (block: Block) => {
      const history: string[] = []
      let agree = 0
      const by: Record<string, number> = {}
      for (let i = 0; i < PICKS; i++) {
        const p = await medium.next(tracks, block, history, Infinity, Z, history.at(-1) ?? null)
        if (p.track.id === pickNext(tracks, morning, history, Infinity, { by: 'mood', scores: direct }).track.id) agree++
        by[p.by] = (by[p.by] ?? 0) + 1
        history.push(p.track.id)
      }
      const plays = Object.fromEntries(
        pool.map((id) => [
          id
            .split('/')
            .at(-1)!
            .replace(/^\d+ |\.mp3$/g, ''),
          history.filter((h) => h === id).length,
        ]),
      )
      return { agree, by, plays, played: new Set(history) }
    }
    const mood = await run(morning)
    // the control: the mood's four axes shuffled (energy <- warmth, brightness <- tension, and back)
    const shuffled = await run(shuffle(morning))
    // the control: the field erased, so nothing resonates
    await medium.engine.scale(new Float32Array(MEDIUM_SIZE * MEDIUM_SIZE))
    const erased = await run(morning)
    for (const [name, r] of Object.entries({ mood, shuffled, erased })) {
      const [lo, hi] = wilson(r.agree, PICKS)
      process.stderr.write(
        `${name}: agrees with the oracle ${r.agree}/${PICKS} (${lo.toFixed(2)}-${hi.toFixed(2)}); by ${JSON.stringify(r.by)}; plays ${JSON.stringify(r.plays)}\n`,
      )
    }
    for (const r of [mood, shuffled, erased]) expect(r.played).toEqual(new Set(pool))
    // the oracle's favourite of the band plays every third pick (a window of two allows no more) with
    // the mood; one pick in five with the field erased (recency takes turns), fewer with the axes shuffled
    const favourite = pool.reduce((a, b) => (direct.get(b)! > direct.get(a)! ? b : a))
    const count = (r: typeof mood) => Object.entries(r.plays).find(([name]) => favourite.includes(name))![1]
    expect(count(mood)).toBe(PICKS / 3)
    expect(count(erased)).toBe(PICKS / 5)
    expect(count(shuffled)).toBeLessThan(count(erased))
    expect(wilson(mood.agree, PICKS)[0]).toBeGreaterThan(wilson(shuffled.agree, PICKS)[1])
    expect(erased.by).toEqual({ recency: PICKS })
  }, 600_000)

  test("every block's mood chooses: over the five blocks its picks agree with the oracle more than with the field erased or the mood's axes shuffled, and in no block less than with the field erased", async () => {
    const medium = await writtenMedium()
    const blocks = Object.values(BLOCKS)
    // awake, a pick is the medium's reading of the block's mood (one sweep for every mood here: the
    // medium stands still between picks) ranked by the rules, as StationMedium.next does
    const read = await medium.resonance([...blocks.map((b) => moodVector(b.mood)), ...blocks.map((b) => moodVector(shuffle(b).mood))])
    await medium.engine.scale(new Float32Array(MEDIUM_SIZE * MEDIUM_SIZE))
    const erased = await medium.resonance(blocks.map((b) => moodVector(b.mood)))
    for (const reading of erased) expect(reading.size).toBe(0)
    const agreement = (block: Block, scores: ReadonlyMap<string, number>) => {
      const history: string[] = []
      let agree = 0
      for (let i = 0; i < PICKS; i++) {
        const id = pickNext(tracks, block, history, Infinity, { by: 'mood', scores }).track.id
        if (id === pickNext(tracks, block, history, Infinity, { by: 'mood', scores: oracle(block) }).track.id) agree++
        history.push(id)
      }
      return agree
    }
    const rows = blocks.map((b, i) => ({
      block: b.name,
      mood: agreement(b, read[i]),
      shuffled: agreement(b, read[blocks.length + i]),
      erased: agreement(b, erased[i]),
    }))
    const total = (k: 'mood' | 'shuffled' | 'erased') => rows.reduce((sum, r) => sum + r[k], 0)
    const n = PICKS * blocks.length
    for (const r of rows)
      process.stderr.write(`${r.block}: agrees with the oracle ${r.mood}/${PICKS}; shuffled ${r.shuffled}; erased ${r.erased}\n`)
    for (const k of ['mood', 'shuffled', 'erased'] as const) {
      const [lo, hi] = wilson(total(k), n)
      process.stderr.write(`all blocks, ${k}: ${total(k)}/${n} (${lo.toFixed(2)}-${hi.toFixed(2)})\n`)
    }
    expect(wilson(total('mood'), n)[0]).toBeGreaterThan(wilson(total('erased'), n)[1])
    expect(wilson(total('mood'), n)[0]).toBeGreaterThan(wilson(total('shuffled'), n)[1])
    for (const r of rows) expect(r.mood).toBeGreaterThanOrEqual(r.erased)
  }, 600_000)
})

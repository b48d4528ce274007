// Probe and recall as a user relies on them, at the scale the issue names: 10,000 memories.
import { afterAll, describe, expect, test } from 'vitest'
import type { Material } from '../contracts/material.js'
import type { Engine } from '../field/engine.js'
import { CrystalError } from '../errors.js'
import { stepParams } from '../field/params.js'
import { engineOn } from '../testing/backends.js'
import { EVERYTHING_ON, randomField } from '../testing/fixtures.js'
import { AdjointField } from './adjoint.js'

const open: Engine[] = []
afterAll(() => open.forEach((e) => e.destroy()))
async function engine(o: Parameters<typeof engineOn>[1]): Promise<Engine> {
  const e = await engineOn('cpu', o)
  open.push(e)
  return e
}

/** A deterministic vocabulary of made-up words, and texts of four distinct words from it. */
function corpus(count: number, seed: number): { vocabulary: string[]; texts: string[] } {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
  const vocabulary: string[] = []
  for (const a of syllables) for (const b of syllables) for (const c of ['', 'n', 'r']) if (vocabulary.length < 400) vocabulary.push(a + b + c)
  let s = seed >>> 0
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  const texts = new Set<string>()
  while (texts.size < count) {
    const words = new Set<string>()
    while (words.size < 4) words.add(vocabulary[Math.floor(rand() * vocabulary.length)])
    texts.add([...words].join(' '))
  }
  return { vocabulary, texts: [...texts] }
}

describe('the adjoint', () => {
  test('running back with the adjoint gives exactly the correlation a forward run would: <r, G w> = <G^T r, w>', async () => {
    // linear (no saturation) and noiseless, but with damping, viscosity and a leaky sponge
    const linear: Material = { ...EVERYTHING_ON, nonlinearity: 0, noise_coupling: 0 }
    const n = 32
    const steps = 150
    const w = randomField(n, 1, 11)
    const r = randomField(n, 1, 12)
    const e = await engine({ size: n, material: linear, temperature_k: 0 })
    await e.inject(w)
    await e.step(steps)
    const { u } = await e.read()
    const forward = u.reduce((s, v, i) => s + v * r[i], 0)
    const adjoint = new AdjointField(stepParams({ n, fields: 1, material: linear, temperature_k: 0, noise: 0 }), r)
    for (let i = 0; i < steps; i++) adjoint.step()
    const back = adjoint.readout().reduce((s, v, i) => s + v * w[i], 0)
    expect(Math.abs(forward)).toBeGreaterThan(1) // a real overlap, not two zeros
    expect(Math.abs(back - forward)).toBeLessThan(1e-4 * Math.abs(forward))
  })
})

describe('recall over 10,000 memories', () => {
  const { vocabulary, texts } = corpus(10_000, 42)
  let medium: Engine

  test('10,000 memories written in batches of 250, five steps apart', async () => {
    medium = await engine({ size: 64, material: 'ideal_resonator', seed: 9 })
    for (let i = 0; i < texts.length; i += 250) {
      await medium.writeMany(texts.slice(i, i + 250).map((text) => ({ text })))
      await medium.step(5)
    }
    expect(medium.memories).toHaveLength(10_000)
  }, 300_000)

  test('the text asked for ranks first for at least 99% of 200 sampled queries', async () => {
    let first = 0
    for (let q = 0; q < 200; q++) {
      const text = texts[(q * 7919) % texts.length]
      const [top] = await medium.recall(text, 10)
      if (top.text === text) first++
    }
    expect(first / 200).toBeGreaterThanOrEqual(0.99)
  }, 300_000)

  test('a one-word query has a memory containing that word in its top 3 for at least 90% of sampled words', async () => {
    let hits = 0
    const words = vocabulary.filter((_, i) => i % 4 === 0) // 100 words
    for (const word of words) {
      const top = await medium.recall(word, 3)
      if (top.some((h) => h.text.split(' ').includes(word))) hits++
    }
    expect(hits / words.length).toBeGreaterThanOrEqual(0.9)
  }, 300_000)
})

describe('probe and dreams', () => {
  test('probe of a written text beats probe of unwritten ones, after the field has moved on', async () => {
    const e = await engine({ size: 64, material: 'ideal_resonator', seed: 4 })
    await e.write('amber river at dusk')
    await e.write('the cold glyph remembers')
    await e.write('copper lantern')
    await e.step(200)
    const written = await e.probe('the cold glyph remembers')
    for (const other of ['violet sky over salt', 'seven quiet engines', 'lantern of copper']) {
      expect(written.resonance).toBeGreaterThan((await e.probe(other)).resonance)
    }
  })

  test('probe holds up under saturation: europium at 4 K, 500 steps on, written beats unwritten by far', async () => {
    // the saturation term outweighs the wave term here, so a linear read-back would fail (it did)
    const e = await engine({ size: 64, material: 'europium_crystal', seed: 7 })
    await e.write('the cold glyph remembers')
    await e.step(500)
    const written = await e.probe('the cold glyph remembers')
    const unwritten = await e.probe('a warm river of stones')
    expect(written.resonance).toBeGreaterThan(0.6)
    expect(written.resonance).toBeGreaterThan(unwritten.resonance + 0.3)
  })

  test('the memory a deep dream pruned most ranks lower than before the dream', async () => {
    const e = await engine({ size: 64, material: 'ideal_resonator', seed: 2 })
    const { texts: background } = corpus(30, 7)
    await e.writeMany(background.map((text) => ({ text })))
    const amber = ['amber river', 'amber stone', 'amber night', 'amber glass', 'amber ember', 'amber harbor lights']
    await e.writeMany(amber.map((text) => ({ text })))
    await e.step(100)
    const rankOf = async (text: string) => (await e.recall('amber', 36)).find((h) => h.text === text)!.rank
    const before = new Map<string, number>()
    for (const t of amber) before.set(t, await rankOf(t))
    await e.dream('deep')
    // which memory did the dream prune most? the one with most of its wavefront where the mask cut
    const last = e.history.at(-1)!
    if (last.kind !== 'scale') throw new Error('the dream left no scaling in the history')
    const { textWavefront } = await import('../encode/text.js')
    let pruned = ''
    let worst = -1
    for (const t of amber) {
      const w = await textWavefront(t, 64)
      let cut = 0, all = 0
      w.forEach((v, i) => {
        all += v * v
        cut += v * v * Math.max(0, 1 - last.mask[i])
      })
      if (cut / all > worst) [worst, pruned] = [cut / all, t]
    }
    expect(await rankOf(pruned)).toBeGreaterThan(before.get(pruned)!)
  })

  test('recall on an empty medium is an error, not an empty answer; k is checked', async () => {
    const e = await engine({ size: 32 })
    const empty = await e.recall('anything', 3).catch((x) => x)
    expect(empty).toBeInstanceOf(CrystalError)
    expect(empty.message).toBe('the medium holds no memories yet; write something first')
    await e.write('something')
    await expect(e.recall('something', 0)).rejects.toThrow('k must be a whole number from 1 to 1000, got 0')
    expect((await e.recall('something', 5)).map((h) => h.text)).toEqual(['something'])
  })
})

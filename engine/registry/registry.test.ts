// The registry as its users depend on it: novelty, serials, caps, and a file that survives
// concurrent writers, a crash mid-write and corruption.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { CrystalError } from '../errors.js'
import { candidate } from '../../testing/fixtures.js'
import { FileRegistryStore } from './file_store.node.js'
import { contentHash, DEFAULT_LIMITS, MemoryRegistryStore, quality, Registry } from './registry.js'

const WRITER = new URL('../../testing/registry_writer.mjs', import.meta.url).pathname
const freshDir = () => mkdtempSync(join(tmpdir(), 'crystal-registry-'))

describe('registration', () => {
  test('serials count up as CRY-000001, CRY-000002, ...; each primitive gets a uuid', async () => {
    const r = new Registry(new MemoryRegistryStore())
    const { registered } = await r.register([candidate(1), candidate(2)])
    expect(registered.map((p) => p.id)).toEqual(['CRY-000001', 'CRY-000002'])
    expect(new Set(registered.map((p) => p.uuid)).size).toBe(2)
    expect(registered[0].provenance).toBeNull()
  })

  test('a candidate too similar to a held primitive of its class is rejected, naming the duplicate', async () => {
    const r = new Registry(new MemoryRegistryStore())
    await r.register([candidate(1)])
    const near = candidate(1, { signature: candidate(1).signature.map((v, i) => v + (i === 0 ? 0.01 : 0)) })
    const otherClass = candidate(1, { class: 'echo_ring' })
    const outcome = await r.register([near, otherClass])
    expect(outcome.rejected).toEqual([{ index: 0, reason: 'duplicate', duplicate_of: 'CRY-000001', similarity: expect.any(Number) }])
    expect(outcome.rejected[0].similarity).toBeGreaterThan(DEFAULT_LIMITS.novelty_threshold)
    expect(outcome.registered.map((p) => p.class)).toEqual(['echo_ring'])
  })

  test('an import whose uuid is already held is merged once', async () => {
    const r = new Registry(new MemoryRegistryStore())
    const uuid = '0f0e0d0c-0b0a-4908-8706-050403020100'
    const provenance = { node: 'node-a', origin_id: 'CRY-000007', origin_uuid: uuid, imported_at: '2026-11-20T00:00:00.000Z' }
    const first = await r.register([candidate(5, { uuid, provenance })])
    const again = await r.register([candidate(6, { uuid, provenance })])
    expect(first.registered[0].uuid).toBe(uuid)
    expect(again.registered).toEqual([])
    expect(again.rejected[0].duplicate_of).toBe(first.registered[0].id)
  })

  test('similar() ranks by signature similarity', async () => {
    const r = new Registry(new MemoryRegistryStore())
    const base = candidate(10)
    const close = candidate(11, { signature: base.signature.map((v, i) => (i < 16 ? -v : v)) }) // about 0.5 alike: similar, not a duplicate
    await r.register([base, candidate(12), close, candidate(13)])
    const hits = await r.similar('CRY-000001', 2)
    expect(hits[0].primitive.id).toBe('CRY-000003')
    expect(hits[0].similarity).toBeGreaterThan(hits[1].similarity)
    await expect(r.similar('CRY-999999')).rejects.toThrow('no primitive CRY-999999 in the registry')
  })
})

describe('signatures', () => {
  test('a signature with no direction (all zeros, non-finite, a norm beyond float64) is refused before anything is written, naming the candidate', async () => {
    const r = new Registry(new MemoryRegistryStore())
    const huge = candidate(2, { signature: candidate(2).signature.map(() => 1e308) })
    const bad = [
      candidate(2, { signature: candidate(2).signature.map(() => 0) }),
      huge,
      candidate(2, { signature: [Number.NaN, ...candidate(2).signature.slice(1)] }),
      candidate(2, { signature: [] }),
    ]
    for (const c of bad) {
      const error = await r.register([candidate(1), c]).catch((e) => e)
      expect(error).toBeInstanceOf(CrystalError)
      expect(error.code).toBe('bad_argument')
      expect(error.where).toEqual({ field: 'candidates[1].signature' })
    }
    // two twins of 1e308 used to pass each other (their cosine was NaN): now neither is held
    await expect(r.register([huge, huge])).rejects.toThrow('candidates[0]: the signature has a norm beyond float64')
    expect(await r.list()).toEqual([])
    expect((await r.file()).next_serial).toBe(1)
  })

  test('an import with a bad signature is refused naming its uuid (the archivist path, novelty off)', async () => {
    const r = new Registry(new MemoryRegistryStore())
    const uuid = '0f0e0d0c-0b0a-4908-8706-050403020100'
    const zero = candidate(3, { uuid, signature: candidate(3).signature.map(() => 0) })
    await expect(r.register([zero], { novelty: false })).rejects.toThrow(`candidates[0] (uuid ${uuid}): the signature is all zeros`)
  })

  test('a registry written before the check, holding a zero signature, still loads; similar() to it is refused, and it ranks as unlike everything', async () => {
    const dir = freshDir()
    await new Registry(new FileRegistryStore(dir)).register([candidate(1), candidate(2), candidate(3)])
    const path = join(dir, 'registry.json')
    const file = JSON.parse(readFileSync(path, 'utf8'))
    file.primitives[1].signature = file.primitives[1].signature.map(() => 0)
    file.content_hash = await contentHash(file.primitives)
    writeFileSync(path, JSON.stringify(file))
    const r = new Registry(new FileRegistryStore(dir))
    expect(await r.list()).toHaveLength(3)
    const error = await r.similar('CRY-000002', 5, 'similar_to').catch((e) => e)
    expect(error).toMatchObject({ code: 'bad_argument', where: { field: 'similar_to' } })
    expect(error.message).toContain('nothing can be ranked by similarity to CRY-000002: its signature is all zeros')
    const hits = await r.similar('CRY-000001')
    expect(hits.every((h) => Number.isFinite(h.similarity))).toBe(true)
    expect(hits.find((h) => h.primitive.id === 'CRY-000002')?.similarity).toBe(0)
    expect(hits.map((h) => h.similarity)).toEqual([...hits.map((h) => h.similarity)].sort((a, b) => b - a))
    // new registrations still go through beside it
    expect((await r.register([candidate(4)])).registered).toHaveLength(1)
  })

  test("an id or uuid is found whatever its letters' case", async () => {
    const r = new Registry(new MemoryRegistryStore())
    await r.register([candidate(1)])
    const held = await r.get('CRY-000001')
    expect((await r.get('cry-000001')).uuid).toBe(held.uuid)
    expect((await r.get(held.uuid.toUpperCase())).id).toBe('CRY-000001')
    await expect(r.get('cry-000002')).rejects.toThrow('no primitive cry-000002 in the registry')
  })

  test('a primitive not held is not_found, naming the field the caller asked by', async () => {
    const r = new Registry(new MemoryRegistryStore())
    await expect(r.similar('CRY-999999')).rejects.toMatchObject({ code: 'not_found', where: { field: 'id' } })
    await expect(r.similar('CRY-999999', 5, 'similar_to')).rejects.toMatchObject({ code: 'not_found', where: { field: 'similar_to' } })
  })
})

describe('caps', () => {
  test('the bucket cap (class x material) drops the lowest quality first, and says so', async () => {
    const r = new Registry(new MemoryRegistryStore(), { ...DEFAULT_LIMITS, bucket_cap: 3 })
    const qs = [0.9, 0.2, 0.6, 0.4, 0.8]
    const out = await r.register(qs.map((q, i) => candidate(i + 1, { persistence: q, noise_tolerance: q })))
    const kept = await r.list()
    expect(kept.map((p) => p.persistence).sort()).toEqual([0.6, 0.8, 0.9])
    expect(out.pruned.map((p) => [p.id, p.reason])).toEqual([
      ['CRY-000004', 'bucket_cap'],
      ['CRY-000002', 'bucket_cap'],
    ])
    // a different material is a different bucket
    await r.register([candidate(9, { material: 'silicon', persistence: 0.1, noise_tolerance: 0.1 })])
    expect(await r.list()).toHaveLength(4)
  })

  test('the total cap applies across buckets; serials are never reused after pruning', async () => {
    const r = new Registry(new MemoryRegistryStore(), { ...DEFAULT_LIMITS, max_primitives: 2 })
    await r.register([
      candidate(1, { persistence: 0.5 }),
      candidate(2, { class: 'echo_ring', persistence: 0.9 }),
      candidate(3, { class: 'phase_knot', persistence: 0.1 }),
    ])
    expect((await r.list()).map((p) => p.id).sort()).toEqual(['CRY-000001', 'CRY-000002'])
    const { registered } = await r.register([candidate(4, { class: 'memory_seed', persistence: 1, noise_tolerance: 1 })])
    expect(registered[0].id).toBe('CRY-000004')
  })

  test('prune --dry-run reports and changes nothing; prune removes', async () => {
    const store = new MemoryRegistryStore()
    await new Registry(store).register([1, 2, 3].map((i) => candidate(i)))
    const capped = new Registry(store, { ...DEFAULT_LIMITS, bucket_cap: 1 })
    const would = await capped.prune(true)
    expect(would).toHaveLength(2)
    expect(await capped.list()).toHaveLength(3)
    expect(await capped.prune()).toEqual(would)
    expect(await capped.list()).toHaveLength(1)
  })

  test('quality is 0.7 persistence + 0.3 noise tolerance', () => {
    expect(quality({ persistence: 1, noise_tolerance: 0 })).toBeCloseTo(0.7)
  })
})

describe('the registry file', () => {
  test('is written in the documented format, and read back verified', async () => {
    const dir = freshDir()
    const r = new Registry(new FileRegistryStore(dir))
    await r.register([candidate(1), candidate(2)])
    const file = JSON.parse(readFileSync(join(dir, 'registry.json'), 'utf8'))
    expect(file).toMatchObject({ format: 'svc-crystal-registry/1', next_serial: 3, content_hash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(await new Registry(new FileRegistryStore(dir)).list()).toHaveLength(2)
  })

  test('two processes registering at once lose nothing and never reuse a serial', async () => {
    const dir = freshDir()
    const run = (seed: number) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [WRITER, dir, '25', String(seed)])
        let out = ''
        child.stdout.on('data', (d) => (out += d))
        child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`writer exited ${code}`))))
      })
    const [a, b] = await Promise.all([run(1), run(2)])
    const ids = (a + b).trim().split('\n')
    expect(ids).toHaveLength(50)
    expect(new Set(ids).size).toBe(50)
    const held = await new Registry(new FileRegistryStore(dir)).list()
    expect(held).toHaveLength(50)
    expect(held.map((p) => p.id).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `CRY-${String(i + 1).padStart(6, '0')}`))
  })

  test('a process killed mid-write leaves the previous registry intact, and its lock is taken over', async () => {
    const dir = freshDir()
    const child = spawn(process.execPath, [WRITER, dir, '100000', '3', '1000'])
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    await new Promise((r) => setTimeout(r, 150))
    child.kill('SIGKILL')
    await new Promise((r) => child.on('exit', r))
    const store = new FileRegistryStore(dir, { staleMs: 1000 })
    const before = await new Registry(store).list() // verified: parses, schema and content hash hold
    expect(before.length).toBeGreaterThan(0)
    const { registered } = await new Registry(store).register([candidate(424242)])
    expect(registered[0].id).toBe(`CRY-${String(before.length + 1).padStart(6, '0')}`)
  })

  test('a corrupt file is refused, not overwritten', async () => {
    const dir = freshDir()
    const path = join(dir, 'registry.json')
    writeFileSync(path, '{"format": "svc-crystal-registry/1", "next_serial": 3, "primiti')
    const r = new Registry(new FileRegistryStore(dir))
    const error = await r.register([candidate(1)]).catch((e) => e)
    expect(error).toBeInstanceOf(CrystalError)
    expect(error.code).toBe('registry_corrupt')
    expect(error.message).toContain(`${path}: not valid JSON`)
    expect(error.message).toContain('left untouched')
    expect(readFileSync(path, 'utf8')).toBe('{"format": "svc-crystal-registry/1", "next_serial": 3, "primiti')
  })

  test("a file edited behind the registry's back (content hash mismatch) and a foreign file are refused", async () => {
    const dir = freshDir()
    await new Registry(new FileRegistryStore(dir)).register([candidate(1)])
    const path = join(dir, 'registry.json')
    const file = JSON.parse(readFileSync(path, 'utf8'))
    file.primitives[0].persistence = 1
    writeFileSync(path, JSON.stringify(file))
    await expect(new Registry(new FileRegistryStore(dir)).list()).rejects.toThrow('its content hash does not match its primitives')
    writeFileSync(path, JSON.stringify({ format: 'something-else/2', items: [] }))
    await expect(new Registry(new FileRegistryStore(dir)).list()).rejects.toThrow(
      'not a Resonant Crystal registry (format "something-else/2"',
    )
    expect(existsSync(path)).toBe(true)
  })
})

test('the writer helper exists and runs (guards the concurrency tests against a silent no-op)', () => {
  const dir = freshDir()
  const r = spawnSync(process.execPath, [WRITER, dir, '2', '9'], { encoding: 'utf8' })
  expect(r.status).toBe(0)
  expect(r.stdout.trim().split('\n')).toEqual(['CRY-000001', 'CRY-000002'])
})

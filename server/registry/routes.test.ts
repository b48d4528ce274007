// The registry routes in a bare Fastify instance (errors as problem+json, the routes, a registry in
// memory): what POST /primitives refuses, and how GET /primitives?similar_to= ranks and fails.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { MaterialCatalog } from '../../engine/field/materials.js'
import { MemoryRegistryStore, Registry } from '../../engine/registry/registry.js'
import { candidate } from '../../testing/fixtures.js'
import { registerErrors } from '../errors.js'
import { registryRoutes } from './routes.js'

let app: FastifyInstance
let registry: Registry

beforeEach(async () => {
  registry = new Registry(new MemoryRegistryStore())
  app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  registerErrors(app)
  await app.register(registryRoutes, { catalog: new MaterialCatalog(), registry: () => registry })
})
afterEach(async () => {
  await app.close()
})

const post = (candidates: unknown[]) => app.inject({ method: 'POST', url: '/primitives', payload: { candidates } })

describe('POST /primitives', () => {
  test('an unknown material is refused (422 unknown_material) naming the candidate and the material; nothing is registered', async () => {
    const r = await post([candidate(1), candidate(2, { material: 'unobtanium' })])
    expect(r.statusCode).toBe(422)
    expect(r.json()).toMatchObject({ code: 'unknown_material', where: { field: 'candidates[1].material' } })
    expect(r.json().detail).toBe('candidates[1]: unknown material "unobtanium"')
    expect(r.json().hint).toContain('ideal_resonator')
    expect(await registry.list()).toEqual([])
  })

  test("an import (with provenance) keeps its node's material, as the archivist does: a peer's own material file", async () => {
    const provenance = { node: 'node-b', origin_id: 'CRY-000009', origin_uuid: '0f0e0d0c-0b0a-4908-8706-050403020100' }
    const r = await post([
      candidate(1, {
        material: 'peer_glass',
        uuid: provenance.origin_uuid,
        provenance: { ...provenance, imported_at: '2026-11-20T00:00:00.000Z' },
      }),
    ])
    expect(r.statusCode).toBe(200)
    expect(r.json().registered).toEqual(['CRY-000001'])
  })

  test('a signature of zeros, or of 1e308s (twins included), is refused (400 bad_argument) naming the candidate; nothing is registered', async () => {
    const zeros = candidate(2, { signature: candidate(2).signature.map(() => 0) })
    const huge = candidate(3, { signature: candidate(3).signature.map(() => 1e308) })
    for (const body of [
      [candidate(1), zeros],
      [candidate(1), huge],
      [huge, huge],
    ]) {
      const r = await post(body)
      expect(r.statusCode).toBe(400)
      expect(r.json().code).toBe('bad_argument')
      expect(r.json().where.field).toMatch(/^candidates\[[01]\]\.signature$/)
    }
    expect(await registry.list()).toEqual([])
  })
})

describe('GET /primitives?similar_to=', () => {
  test('a primitive not held is 404 naming the field similar_to', async () => {
    const r = await app.inject({ method: 'GET', url: '/primitives?similar_to=CRY-999999' })
    expect(r.statusCode).toBe(404)
    expect(r.json()).toMatchObject({ code: 'not_found', where: { field: 'similar_to' } })
  })

  test('a held primitive with a zero signature (kept from before the check) is refused, not answered in id order', async () => {
    const store = new MemoryRegistryStore()
    await new Registry(store).register([candidate(1), candidate(2), candidate(3)])
    const file = await store.read()
    file.primitives[1].signature = file.primitives[1].signature.map(() => 0)
    registry = new Registry(store)
    const r = await app.inject({ method: 'GET', url: '/primitives?similar_to=CRY-000002' })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toMatchObject({ code: 'bad_argument', where: { field: 'similar_to' } })
    const ranked = await app.inject({ method: 'GET', url: '/primitives?similar_to=CRY-000001' })
    expect(ranked.statusCode).toBe(200)
    const order = (await registry.similar('CRY-000001')).map((h) => h.primitive.id)
    expect(ranked.json().items.map((p: { id: string }) => p.id)).toEqual(order)
  })
})

// A discovery announced on the bus is read against its contract on receipt; one whose signature has no
// direction is dropped there as a malformed one is, since the registry would refuse it (an archivist
// that re-reads its stream would otherwise stop at it every time).
import { expect, test } from 'vitest'
import { candidate } from '../../testing/fixtures.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { announcementsOf } from '../swarm/rounds.js'
import { readAnnouncement } from './swarm.js'

test('an announcement whose signature is all zeros or holds a NaN is dropped on receipt, naming it; a sound one is read', async () => {
  const registry = new Registry(new MemoryRegistryStore())
  await registry.register([candidate(1)])
  const [message] = announcementsOf(await registry.list(), 0, 'node-a')
  const read = (m: unknown) => readAnnouncement({ json: () => JSON.parse(JSON.stringify(m)) })
  expect(read(message)).toEqual({ message: JSON.parse(JSON.stringify(message)) })
  const zeros = { ...message, primitive: { ...message.primitive, signature: message.primitive.signature.map(() => 0) } }
  expect(read(zeros)).toEqual({ error: '/primitive/signature: is all zeros, so it has no direction to compare by' })
  // JSON has no NaN: a peer's 1e308s overflow the norm instead
  const huge = { ...message, primitive: { ...message.primitive, signature: message.primitive.signature.map(() => 1e308) } }
  expect(read(huge)).toMatchObject({ error: expect.stringContaining('/primitive/signature: has a norm beyond float64') })
})

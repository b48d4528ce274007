// `crystal archive` against a real nats-server with JetStream: it merges every announcement once by
// uuid, with provenance naming the origin node and fresh local serials; malformed messages are
// dropped with a warning; without a bus it says what to set.
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DISCOVERY_STREAM, SUBJECTS } from '../engine/contracts/swarm.js'
import { startNats, type RunningNats } from '../testing/services.js'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const crystal = (env: Record<string, string | undefined>, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SVC_NATS_URL: undefined, ...env },
    timeout: 60_000,
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('crystal archive', () => {
  let nats: RunningNats
  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(async () => {
    await nats?.stop()
  })

  test('without SVC_NATS_URL, or with no server there: a clear error, exit 1', () => {
    const none = crystal({ SVC_CRYSTAL_DATA_DIR: mkdtempSync(join(tmpdir(), 'crystal-arch-')) }, 'archive')
    expect(none.status).toBe(1)
    expect(none.stderr.trim()).toBe("crystal: archive needs the swarm's NATS server: set SVC_NATS_URL (for example nats://127.0.0.1:4222)")
    const away = crystal({ SVC_NATS_URL: 'nats://127.0.0.1:1' }, 'archive')
    expect(away.status).toBe(1)
    expect(away.stderr).toContain('cannot reach NATS at nats://127.0.0.1:1')
  })

  test('merges announcements made before it started, each uuid once, with provenance; drops malformed ones', async () => {
    // an explorer's discoveries: a real evolve into its own registry
    const explorer = mkdtempSync(join(tmpdir(), 'crystal-explorer-'))
    // (novelty keeps a small evolve's finds to one or two per material: two materials give three, on the
    // CPU backend; a hardware GPU's last bits may move a hash, and the test is of the archivist)
    for (const material of ['diamond_nv', 'europium_crystal'])
      expect(
        crystal(
          { SVC_CRYSTAL_DATA_DIR: explorer, CRYSTAL_BACKEND: 'cpu' },
          'evolve',
          '--material',
          material,
          '--generations',
          '1',
          '--population',
          '6',
          '--size',
          '32',
        ).status,
      ).toBe(0)
    const found = JSON.parse(readFileSync(join(explorer, 'registry.json'), 'utf8')).primitives.slice(0, 3)
    expect(found).toHaveLength(3)

    const nc = await connect({ servers: nats.url })
    const jsm = await jetstreamManager(nc)
    await jsm.streams.add({ name: DISCOVERY_STREAM, subjects: [SUBJECTS.discovered] })
    const js = jetstream(nc)
    const announce = (body: unknown) => js.publish(SUBJECTS.discovered, JSON.stringify(body))
    for (const p of found) await announce({ schema_version: 1, ts: new Date().toISOString(), sender: 'node-a', primitive: p })
    await announce({ schema_version: 1, ts: new Date().toISOString(), sender: 'node-b', primitive: found[0] }) // the same uuid again
    await announce({ schema_version: 1, ts: new Date().toISOString(), sender: 'node-c' }) // no primitive
    await js.publish(SUBJECTS.discovered, 'not json at all')
    await nc.close()

    const archive = mkdtempSync(join(tmpdir(), 'crystal-archive-'))
    const r = crystal({ SVC_CRYSTAL_DATA_DIR: archive, SVC_NATS_URL: nats.url }, 'archive', '--catch-up', '--json')
    expect(r.stderr + `\nstatus ${r.status}`).toContain('status 0')
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.filter((l) => l.merged).map((l) => l.merged)).toEqual(['CRY-000001', 'CRY-000002', 'CRY-000003'])
    expect(lines.filter((l) => l.already_held)).toEqual([{ already_held: 'CRY-000001', uuid: found[0].uuid, node: 'node-b' }])
    expect(r.stderr).toMatch(/warning: dropped a malformed message on svc\.crystal\.primitive\.discovered \(seq 5\): \/primitive: /)
    expect(r.stderr).toMatch(/warning: dropped a malformed message .* \(seq 6\): not JSON/)
    expect(r.stderr).toContain('archive: merged 3, already held 1, dropped 2')

    const held = JSON.parse(readFileSync(join(archive, 'registry.json'), 'utf8')).primitives
    expect(held.map((p: { uuid: string }) => p.uuid)).toEqual(found.map((p: { uuid: string }) => p.uuid))
    held.forEach((p: any, i: number) =>
      expect(p.provenance).toMatchObject({ node: 'node-a', origin_id: found[i].id, origin_uuid: found[i].uuid }),
    )

    // a second archivist pass finds everything already held
    const again = crystal({ SVC_CRYSTAL_DATA_DIR: archive, SVC_NATS_URL: nats.url }, 'archive', '--catch-up', '--json')
    expect(again.status).toBe(0)
    expect(
      again.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((l) => l.merged),
    ).toEqual([])
    expect(JSON.parse(readFileSync(join(archive, 'registry.json'), 'utf8')).primitives).toHaveLength(3)
  })
})

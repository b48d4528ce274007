// The swarm against a real nats-server with JetStream: explorer processes announce, an archivist
// started after them still gets everything once, a server killed mid-run loses nothing, and
// malformed messages on every subject are dropped without crashing anyone.
import { connect } from '@nats-io/transport-node'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { heldPrimitives, startNats, type RunningNats } from '../testing/services.js'
import { exploreTogether, FLOOR, ownAnnounceable, runAnnouncing, smallRounds } from '../testing/swarm.js'

let nats: RunningNats
afterEach(async () => {
  await nats?.stop()
})

describe('the swarm', () => {
  test('three explorers on different materials, then an archivist started after them: every announced primitive once, by uuid, with its origin', async () => {
    nats = await startNats()
    const explorers = ['vacuum', 'europium_crystal', 'silicon'].map((material, k) => ({
      material,
      node: `explorer-${k + 1}`,
      dir: mkdtempSync(join(tmpdir(), `crystal-swarm-${k}-`)),
    }))
    const results = await exploreTogether(nats.url, explorers)
    for (const r of results) expect(r.status, r.stderr).toBe(0)
    // explorers merged each other's finds (those that finished a round before another's later round)
    const rounds = results.flatMap((r) =>
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    )
    expect(rounds.every((l) => typeof l.merged === 'number' && l.waiting === 0)).toBe(true)

    const archive = mkdtempSync(join(tmpdir(), 'crystal-archive-'))
    const a = await runAnnouncing({ SVC_NATS_URL: nats.url, SVC_CRYSTAL_DATA_DIR: archive }, 'archive', '--catch-up')
    expect(a.status, a.stderr).toBe(0)
    const archived = heldPrimitives(archive)
    const announced = explorers.flatMap((e) => ownAnnounceable(e.dir).map((p) => ({ ...p, node: e.node })))
    expect(announced.length).toBeGreaterThan(0)
    // every announced primitive, once, by uuid, with provenance naming the origin node
    expect(archived.map((p) => p.uuid).sort()).toEqual(announced.map((p) => p.uuid).sort())
    for (const p of announced) {
      const copy = archived.find((q) => q.uuid === p.uuid)
      expect(copy.provenance).toMatchObject({ node: p.node, origin_id: p.id, origin_uuid: p.uuid })
    }
    // serials are the archive's own, and unique
    expect(new Set(archived.map((p) => p.id)).size).toBe(archived.length)
    expect(archived.map((p) => p.id).sort()).toEqual(archived.map((_, i) => `CRY-${String(i + 1).padStart(6, '0')}`))
    // nothing below the floor was announced
    expect(archived.every((p) => p.persistence >= FLOOR)).toBe(true)
  })

  test('nats-server killed and restarted mid-run: nothing announced is lost or doubled', async () => {
    nats = await startNats()
    const dir = mkdtempSync(join(tmpdir(), 'crystal-swarm-restart-'))
    const explorer = runAnnouncing(
      { SVC_NATS_URL: nats.url, SVC_CRYSTAL_NODE: 'survivor', SVC_CRYSTAL_DATA_DIR: dir },
      'explore',
      '--material',
      'vacuum,europium_crystal',
      ...smallRounds(6, 0.4),
    )
    await new Promise((r) => setTimeout(r, 1200))
    await nats.restart(1500)
    const r = await explorer
    expect(r.status, r.stderr).toBe(0)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toHaveLength(6)
    expect(lines.at(-1).waiting).toBe(0) // the backlog drained once the bus was back
    const archive = mkdtempSync(join(tmpdir(), 'crystal-archive-'))
    const a = await runAnnouncing({ SVC_NATS_URL: nats.url, SVC_CRYSTAL_DATA_DIR: archive }, 'archive', '--catch-up', '--json')
    expect(a.status, a.stderr).toBe(0)
    const own = ownAnnounceable(dir)
    expect(own.length).toBeGreaterThan(0)
    expect(
      heldPrimitives(archive)
        .map((p) => p.uuid)
        .sort(),
    ).toEqual(own.map((p) => p.uuid).sort())
    // the stream holds each announcement once (the uuid is the message id)
    const merged = a.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(merged.filter((l) => l.already_held)).toEqual([])
  })

  test('an auth-enabled nats-server admits the explorer with its creds file; a missing or malformed creds file is an error that says so', async () => {
    nats = await startNats({ auth: true })
    const dir = mkdtempSync(join(tmpdir(), 'crystal-swarm-creds-'))
    const explore = (creds: string) =>
      runAnnouncing(
        { SVC_NATS_URL: nats.url, SVC_NATS_CREDS: creds, SVC_CRYSTAL_NODE: 'trusted', SVC_CRYSTAL_DATA_DIR: dir },
        'explore',
        '--material',
        'vacuum',
        ...smallRounds(1),
      )
    const r = await explore(nats.creds!)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).not.toMatch(/unreachable/)
    expect(JSON.parse(r.stdout)).toMatchObject({ merged: 0, waiting: 0 })
    // the archivist with the same creds reads back what the explorer announced through the authenticated bus
    const archive = mkdtempSync(join(tmpdir(), 'crystal-archive-creds-'))
    const a = await runAnnouncing(
      { SVC_NATS_URL: nats.url, SVC_NATS_CREDS: nats.creds!, SVC_CRYSTAL_DATA_DIR: archive },
      'archive',
      '--catch-up',
    )
    expect(a.status, a.stderr).toBe(0)
    expect(
      heldPrimitives(archive)
        .map((p) => p.uuid)
        .sort(),
    ).toEqual(
      ownAnnounceable(dir)
        .map((p) => p.uuid)
        .sort(),
    )
    // control: the same server refuses a client without credentials
    await expect(connect({ servers: nats.url, timeout: 2000 })).rejects.toThrow(/Authorization Violation/)

    const missing = join(dir, 'nowhere.creds')
    for (const args of [
      ['archive', '--catch-up'],
      ['explore', '--material', 'vacuum', '--rounds', '1'],
    ]) {
      const m = await runAnnouncing({ SVC_NATS_URL: nats.url, SVC_NATS_CREDS: missing, SVC_CRYSTAL_DATA_DIR: dir }, ...args)
      expect(m.status).toBe(1)
      expect(m.stderr.trim()).toBe(`crystal: cannot read the NATS credentials file ${missing} named by SVC_NATS_CREDS (ENOENT)`)
    }
    const malformed = join(dir, 'broken.creds')
    writeFileSync(malformed, readFileSync(nats.creds!, 'utf8').split('\n\n')[0])
    const b = await explore(malformed)
    expect(b.status).toBe(1)
    expect(b.stderr).toMatch(
      new RegExp(`crystal: the NATS credentials file ${malformed} named by SVC_NATS_CREDS is malformed \\(unable to parse credentials\\)`),
    )
    expect(b.stderr).not.toMatch(/cannot reach NATS|unreachable/)
  })

  test('explorers and an archivist on data directories that do not exist yet: each makes its own, and the finds reach the archive', async () => {
    nats = await startNats()
    // two levels that are not there yet, as a new user's --data-dir would be
    const root = join(mkdtempSync(join(tmpdir(), 'crystal-swarm-new-')), 'not', 'yet')
    const explorers = ['vacuum', 'silicon'].map((material, k) => ({ material, node: `new-${k + 1}`, dir: join(root, `explorer-${k + 1}`) }))
    const results = await exploreTogether(nats.url, explorers)
    for (const r of results) expect(r.status, r.stderr).toBe(0)
    for (const r of results) expect(r.stderr).not.toContain('ENOENT')
    const announced = explorers.flatMap((e) => ownAnnounceable(e.dir))
    expect(announced.length).toBeGreaterThan(0)

    const archive = join(root, 'archive')
    const a = await runAnnouncing({ SVC_NATS_URL: nats.url, SVC_CRYSTAL_DATA_DIR: archive }, 'archive', '--catch-up')
    expect(a.status, a.stderr).toBe(0)
    expect(
      heldPrimitives(archive)
        .map((p) => p.uuid)
        .sort(),
    ).toEqual(announced.map((p) => p.uuid).sort())
  })

  test('malformed messages on every subject are dropped and counted; nothing crashes', async () => {
    nats = await startNats()
    const dir = mkdtempSync(join(tmpdir(), 'crystal-swarm-noise-'))
    const nc = await connect({ servers: nats.url })
    // the noise goes out once the explorer's first round has started: it listens for requests by then
    // (a busy machine may take a while to start it; a fixed pause was not always enough)
    const joined = new Promise<void>((resolve) =>
      nc.subscribe('svc.crystal.events', { callback: (_e, m) => void (m.string().includes('"round.started"') && resolve()) }),
    )
    const explorer = runAnnouncing(
      { SVC_NATS_URL: nats.url, SVC_CRYSTAL_NODE: 'steady', SVC_CRYSTAL_DATA_DIR: dir },
      'explore',
      '--material',
      'vacuum',
      '--rounds',
      '3',
      '--interval',
      '0.5',
      '--generations',
      '1',
      '--population',
      '4',
      '--size',
      '24',
    )
    await joined
    for (const subject of ['svc.crystal.events', 'svc.crystal.explore.request', 'svc.crystal.primitive.discovered']) {
      for (const body of [
        'not json',
        '{}',
        JSON.stringify({ schema_version: 2, ts: 'yesterday', sender: 'x' }),
        JSON.stringify({ schema_version: 1, ts: new Date().toISOString(), sender: 'x', material: 42 }),
      ])
        nc.publish(subject, body)
    }
    await nc.flush()
    await nc.close()
    const r = await explorer
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/dropped an invalid message on svc\.crystal\.explore\.request \(4 so far\)/)
    expect(r.stdout.trim().split('\n')).toHaveLength(3)
  })
})

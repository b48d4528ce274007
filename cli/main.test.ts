// `crystal` as a user runs it: the built command in a child process, its output and exit status.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { registeredArchive } from '../engine/discovery/archive.js'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const EXAMPLES = new URL('../examples/', import.meta.url).pathname
const fresh = (label: string) => mkdtempSync(join(tmpdir(), `crystal-cli-${label}-`))

function crystal(env: Record<string, string | undefined>, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GALLERY_JWT: undefined, SVC_GALLERY_URL: undefined, ...env },
    timeout: 120_000,
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('crystal materials', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('materials') }

  test('prints a table of the eight built-ins', () => {
    const r = crystal(env, 'materials')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/Name\s+│\s+Wave speed/)
    for (const name of [
      'vacuum',
      'ideal_resonator',
      'optical_cavity',
      'europium_crystal',
      'silicon',
      'diamond_nv',
      'metamaterial',
      'graphene_model',
    ])
      expect(r.stdout).toContain(name)
    expect(r.stderr).toBe('')
  })

  test('--json prints machine-readable materials with their source', () => {
    const rows = JSON.parse(crystal(env, 'materials', '--json').stdout)
    expect(rows).toHaveLength(8)
    expect(rows.find((m: { name: string }) => m.name === 'europium_crystal')).toMatchObject({ temperature_k: 4, source: 'built-in' })
  })

  test('--material-file adds a material; a bad one fails with one sentence naming file and field, exit 1', () => {
    const good = join(env.SVC_CRYSTAL_DATA_DIR, 'glass.json')
    writeFileSync(
      good,
      JSON.stringify({
        name: 'my_glass',
        description: 'test',
        wave_speed: 0.4,
        damping: 0.001,
        boundary_reflectivity: 0.5,
        nonlinearity: 0,
        viscosity: 0,
        temperature_k: 300,
        noise_coupling: 0,
      }),
    )
    expect(JSON.parse(crystal(env, 'materials', '--json', '--material-file', good).stdout).map((m: { name: string }) => m.name)).toContain(
      'my_glass',
    )
    const bad = join(env.SVC_CRYSTAL_DATA_DIR, 'bad.json')
    writeFileSync(bad, JSON.stringify({ name: 'bad', description: 'x', wave_speed: 0.9 }))
    const r = crystal(env, 'materials', '--material-file', bad)
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(`crystal: ${bad}: field "damping" is missing`)
  })

  test('--fingerprint adds the measured columns', () => {
    const vacuum = JSON.parse(crystal(env, 'materials', '--json', '--fingerprint').stdout).find(
      (m: { name: string }) => m.name === 'vacuum',
    )
    expect(vacuum.fingerprint.energy_retention).toBeLessThan(1e-6)
    expect(vacuum.fingerprint.dispersion).toBeGreaterThan(0)
  })
})

describe('evolve, primitives, prune', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('evolve') }
  const small = ['--generations', '2', '--population', '6', '--size', '48', '--seed', '3']

  test('evolve registers primitives, shows plain progress when piped and a summary table', () => {
    const r = crystal(env, 'evolve', '--material', 'europium_crystal', ...small)
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/^(cpu|gpu) backend: /m) // auto: the GPU where there is a hardware one
    expect(r.stderr).toMatch(
      /europium_crystal generation 1\/2: best fitness [\d.]+, mean [\d.]+, QD-score [\d.]+, coverage [\d.]+% \(\d+ cells\)/,
    )
    expect(r.stderr).toContain('generation 2/2')
    expect(r.stdout).toMatch(/ID\s+│\s+Type\s+│\s+Persistence %/)
    const [, elites, byClass] = r.stdout.match(
      /registered \d+ new primitives? \(\d+ duplicates? rejected\) from (\d+) archive elites \(([^)]+)\) of 12 genomes/,
    )!
    // the elites per class, named, add up to the elites
    const counts = byClass
      .split(', ')
      .map((part) => part.match(/^(\d+) (Echo Ring|Standing Echo|Harmonic Bridge|Phase Knot|Attractor Field|Memory Seed)$/)!)
    expect(counts.reduce((n, m) => n + Number(m[1]), 0)).toBe(Number(elites))
    expect(r.stdout).toMatch(/│ (Echo Ring|Standing Echo|Harmonic Bridge|Phase Knot|Attractor Field|Memory Seed) \([a-z_]+\)/)
    // both archives, named: the search's own and the material's registered one (the archive map's figure)
    expect(r.stdout).toMatch(
      /; search archive QD-score [\d.]+, coverage [\d.]+% \(\d+ cells\); registered archive of europium_crystal now QD-score [\d.]+ over \d+ cells? \([\d.]+%\)\n$/,
    )
  })

  test('the same evolve again registers nothing new; --json lines (one per generation, then the result) and --quiet', () => {
    const r = crystal(env, '--quiet', 'evolve', '--material', 'europium_crystal', ...small, '--json')
    expect(r.status).toBe(0)
    expect(r.stderr).toBe('')
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.slice(0, 2).map((l) => [l.material, l.generation])).toEqual([
      ['europium_crystal', 1],
      ['europium_crystal', 2],
    ])
    for (const l of lines.slice(0, 2))
      expect(Object.keys(l)).toEqual(expect.arrayContaining(['best_fitness', 'mean_fitness', 'qd_score', 'coverage']))
    const { result } = lines[2]
    expect(result.registered).toEqual([])
    expect(result.rejected_duplicates).toBeGreaterThan(0)
    expect(Object.values(result.elites_by_class as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(result.elites)
    // nothing new registered: the registered archive is what the first run left, the search's own is this search's
    const held = JSON.parse(readFileSync(join(env.SVC_CRYSTAL_DATA_DIR, 'registry.json'), 'utf8')).primitives
    expect(result.registered_archive).toEqual(registeredArchive(held, 'europium_crystal').report)
    expect(result.registered_archive.placed).toBe(held.length)
    expect(result.qd_score).toBeGreaterThan(0)
  })

  test('--detect-threads 0 detects on the main thread: the same run as on two worker threads', () => {
    const run = (threads: string) => {
      const r = crystal(
        { SVC_CRYSTAL_DATA_DIR: fresh(`threads-${threads}`) },
        '--quiet',
        'evolve',
        '--material',
        'europium_crystal',
        ...small,
        '--detect-threads',
        threads,
        '--json',
      )
      expect(r.status).toBe(0)
      return JSON.parse(r.stdout.trim().split('\n').at(-1)!).result
    }
    const [inline, pooled] = [run('0'), run('2')]
    const found = (p: { class: string; hash: string; persistence: number; noise_tolerance: number }) => [
      p.class,
      p.hash,
      p.persistence,
      p.noise_tolerance,
    ]
    expect(inline.registered.length).toBeGreaterThan(0)
    expect(pooled.registered.map(found)).toEqual(inline.registered.map(found))
    expect([pooled.qd_score, pooled.elites_by_class]).toEqual([inline.qd_score, inline.elites_by_class])
  })

  test('primitives --export round-trips the registry file; the table, one in full, filters and similar', () => {
    const exported = JSON.parse(crystal(env, 'primitives', '--export').stdout)
    const file = JSON.parse(readFileSync(join(env.SVC_CRYSTAL_DATA_DIR, 'registry.json'), 'utf8'))
    expect(exported).toEqual(file)
    expect(exported.format).toBe('svc-crystal-registry/1')
    const ids: string[] = exported.primitives.map((p: { id: string }) => p.id)
    expect(ids.length).toBeGreaterThan(1)
    const table = crystal(env, 'primitives')
    expect(table.status).toBe(0)
    for (const id of ids) expect(table.stdout).toContain(id)
    expect(table.stdout).toContain(`${ids.length} primitives`)
    const one = crystal(env, 'primitives', ids[0])
    expect(one.stdout).toMatch(new RegExp(`^${ids[0]}  \\w+\\nuuid\\s+[0-9a-f-]{36}`))
    expect(JSON.parse(crystal(env, 'primitives', ids[0], '--json').stdout).id).toBe(ids[0])
    const strong = JSON.parse(crystal(env, 'primitives', '--min-persistence', '0.5', '--json').stdout)
    expect(strong.every((p: { persistence: number }) => p.persistence >= 0.5)).toBe(true)
    const cls = exported.primitives[0].class
    expect(JSON.parse(crystal(env, 'primitives', '--class', cls, '--json').stdout).every((p: { class: string }) => p.class === cls)).toBe(
      true,
    )
    const similar = crystal(env, 'primitives', '--similar', ids[0])
    expect(similar.stdout).toContain('Similarity')
    expect(similar.stdout).not.toMatch(new RegExp(`^│ ${ids[0]} `, 'm')) // not as a row (it may be in a lineage)
  })

  test('unknown ids and classes are clear errors', () => {
    const missing = crystal(env, 'primitives', 'CRY-999999')
    expect(missing.status).toBe(1)
    expect(missing.stderr.trim()).toBe('crystal: no primitive CRY-999999 in the registry')
    const cls = crystal(env, 'primitives', '--class', 'blob')
    expect(cls.status).toBe(2)
    expect(cls.stderr).toContain('unknown class "blob"')
  })

  test('prune obeys the caps: --dry-run changes nothing, prune removes the lowest quality', () => {
    const before = JSON.parse(crystal(env, 'primitives', '--export').stdout).primitives
    const capped = { ...env, SVC_CRYSTAL_BUCKET_CAP: '1' }
    const dry = crystal(capped, 'prune', '--dry-run')
    expect(dry.status).toBe(0)
    expect(dry.stdout).toMatch(/would remove CRY-\d+ \(quality [\d.]+, over the bucket cap\)/)
    expect(JSON.parse(crystal(env, 'primitives', '--export').stdout).primitives).toEqual(before)
    const done = JSON.parse(crystal(capped, 'prune', '--json').stdout)
    const after = JSON.parse(crystal(env, 'primitives', '--export').stdout).primitives
    expect(after.length).toBe(before.length - done.removed.length)
    const buckets = new Set(after.map((p: { class: string; material: string }) => `${p.class}/${p.material}`))
    expect(buckets.size).toBe(after.length) // one per bucket
    for (const p of after) {
      const rivals = before.filter((q: { class: string; material: string }) => q.class === p.class && q.material === p.material)
      const q = (x: { persistence: number; noise_tolerance: number }) => 0.7 * x.persistence + 0.3 * x.noise_tolerance
      expect(q(p)).toBe(Math.max(...rivals.map(q)))
    }
    expect(crystal(capped, 'prune').stdout).toContain('nothing to prune')
  })

  test('usage errors exit 2: a missing required option, a bad number, an unknown material', () => {
    expect(crystal(env, 'evolve', '--generations', '2').stderr).toContain("required option '--material <name>' not specified")
    const bad = crystal(env, 'evolve', '--material', 'vacuum', '--generations', 'ten')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('--generations must be a whole number from 1 to 10000')
    const unknown = crystal(env, 'evolve', '--material', 'unobtainium', '--generations', '1')
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toMatch(/unknown material "unobtainium" \(known materials: vacuum, /)
  })
})

describe('crystal run', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('run') }

  test('first light on europium: one line per command; the written text out-probes the unwritten one', () => {
    const r = crystal(env, 'run', join(EXAMPLES, 'first-light-europium.crystal'), '--size', '64')
    expect(r.status).toBe(0)
    const probes = [...r.stdout.matchAll(/probe "([^"]+)": resonance (-?[\d.]+) \(noise floor ([\d.]+)/g)].map((m) => ({
      text: m[1],
      resonance: Number(m[2]),
      floor: Number(m[3]),
    }))
    expect(probes).toHaveLength(3)
    expect(probes[0].resonance).toBeGreaterThan(3 * probes[0].floor) // written, at 4 K: well above the floor
    expect(probes[1].resonance).toBeLessThan(probes[1].floor) // never written
    expect(probes[2].resonance).toBeLessThan(probes[2].floor) // warmed and 500 steps on: forgotten
    expect(r.stdout).toMatch(/^ {2}2 {2}material europium_crystal/m)
  })

  test('--json gives a trace; --material overrides the program', () => {
    const r = crystal(env, 'run', join(EXAMPLES, 'recall-demo.crystal'), '--size', '48', '--material', 'optical_cavity', '--json')
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.material_override).toBe('optical_cavity')
    expect(out.trace[0]).toMatchObject({ line: 2, command: 'MATERIAL', result: { material: 'optical_cavity', overridden: true } })
    const recall = out.trace.find((t: { command: string }) => t.command === 'RECALL')
    // one word of each amber text: the two match the query about equally, so either may rank first
    expect(recall.result.hits[0]).toMatchObject({
      rank: 1,
      text: expect.stringMatching(/^amber /),
      match: expect.any(Number),
      strength: expect.any(Number),
      noise_floor: expect.any(Number),
    })
    // as the example's comment says: the two amber memories, and nothing else above the floor
    expect(recall.result.hits.map((h: { text: string }) => h.text).sort()).toEqual(['amber lantern in the window', 'amber river at dusk'])
    expect(out.trace.map((t: { command: string }) => t.command)).toContain('STABILIZE')
  })

  test('merge and split through a program register children with their lineage', () => {
    crystal(env, 'evolve', '--material', 'diamond_nv', '--generations', '1', '--population', '6', '--size', '32')
    const [a, b] = JSON.parse(crystal(env, 'primitives', '--json').stdout)
    const program = join(env.SVC_CRYSTAL_DATA_DIR, 'derive.crystal')
    // derived in a damped medium, where the parents' structures keep their classes (docs/detection.md: basin)
    writeFileSync(program, `MATERIAL diamond_nv\nMERGE ${a.id} ${b.id}\nSPLIT ${a.id}\n`)
    const r = crystal(env, 'run', program, '--size', '32')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`merged ${a.id} \\+ ${b.id} -> (CRY-\\d+ \\(\\w+, persistence \\d+%\\)|a duplicate of CRY-\\d+)`))
    expect(r.stdout).toMatch(new RegExp(`split ${a.id} -> `))
  })

  test('a program with errors reports each with file, line and column, runs nothing and registers nothing', () => {
    const before = readFileSync(join(env.SVC_CRYSTAL_DATA_DIR, 'registry.json'), 'utf8')
    const [a] = JSON.parse(crystal(env, 'primitives', '--json').stdout)
    const program = join(env.SVC_CRYSTAL_DATA_DIR, 'broken.crystal')
    writeFileSync(program, `SPLIT ${a.id}\nMATERIAL unobtainium\nPULSE 0.5\nWRITE "unterminated\nRESONATE ten\nSPLIT CRY-424242\n`)
    const r = crystal(env, 'run', program)
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trim().split('\n')
    expect(lines).toEqual([
      `crystal: ${program}:2:10: unknown material "unobtainium" (materials: vacuum, ideal_resonator, optical_cavity, europium_crystal, silicon, diamond_nv, metamaterial, graphene_model)`,
      `crystal: ${program}:3:1: PULSE takes 2 to 6 arguments, got 1 (PULSE x y [radius] [amplitude] [frequency] [phase])`,
      `crystal: ${program}:4:7: unterminated string (close it with a double quote on the same line)`,
      `crystal: ${program}:5:10: RESONATE steps: expected a number, got "ten" (RESONATE steps)`,
      `crystal: ${program}:6:7: unknown primitive CRY-424242 (crystal primitives lists the registry) (5 errors; nothing was run)`,
    ])
    expect(readFileSync(join(env.SVC_CRYSTAL_DATA_DIR, 'registry.json'), 'utf8')).toBe(before)
  })

  test('an error while the program runs names its file, line and column, and the line that set its cause', () => {
    const program = join(env.SVC_CRYSTAL_DATA_DIR, 'hot.crystal')
    // europium's dephasing at 10,000 K breaks the step's stability bound: the field cannot open
    writeFileSync(program, 'MATERIAL europium_crystal\nTEMPERATURE 10000\n  WRITE "too hot"\n')
    const r = crystal(env, 'run', program, '--size', '32')
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^ {2}2 {2}temperature 10000 K$/m)
    expect(r.stderr.trim()).toBe(
      `crystal: ${program}:3:3: europium_crystal is unstable at 10000 K: its dephasing raises the viscosity past the step's stability bound (docs/physics.md) (set by TEMPERATURE 10000 on line 2)`,
    )
  })

  test('--json: an error while the program runs still prints the lines that ran, with the error', () => {
    const program = join(env.SVC_CRYSTAL_DATA_DIR, 'hot-json.crystal')
    writeFileSync(program, 'MATERIAL europium_crystal\nTEMPERATURE 10000\n  WRITE "too hot"\n')
    const r = crystal(env, 'run', program, '--size', '32', '--json')
    expect(r.status).toBe(1)
    const out = JSON.parse(r.stdout)
    expect(out.trace.map((t: { line: number; command: string }) => [t.line, t.command])).toEqual([
      [1, 'MATERIAL'],
      [2, 'TEMPERATURE'],
    ])
    expect(out.error).toEqual({
      code: 'bad_program',
      message: expect.stringMatching(/:3:3: europium_crystal is unstable at 10000 K/),
      where: { field: 'temperature_k', file: program, line: 3, column: 3 },
      hint: 'set by TEMPERATURE 10000 on line 2',
    })
    expect(r.stderr.trim()).toMatch(/^crystal: .*:3:3: europium_crystal is unstable at 10000 K: .* \(set by TEMPERATURE 10000 on line 2\)$/)
  })

  test('--material replaces every MATERIAL, so the names in the program are not looked up', () => {
    const program = join(env.SVC_CRYSTAL_DATA_DIR, 'elsewhere.crystal')
    writeFileSync(program, 'MATERIAL unobtainium\nRESONATE 5\n')
    const r = crystal(env, 'run', program, '--size', '32', '--material', 'silicon')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^ {2}1 {2}material silicon .*\[--material\]$/m)
    expect(crystal(env, 'run', program, '--size', '32').stderr).toContain('unknown material "unobtainium"')
  })

  test('a missing program file is a clear error', () => {
    const r = crystal(env, 'run', '/nowhere/x.crystal')
    expect(r.status).toBe(1)
    expect(r.stderr.trim()).toBe('crystal: cannot read the program /nowhere/x.crystal (ENOENT)')
  })
})

describe('crystal publish', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('publish') }
  crystal(env, 'evolve', '--material', 'ideal_resonator', '--generations', '1', '--population', '4', '--size', '32')

  async function gallery(): Promise<{
    url: string
    received: { headers: IncomingMessage['headers']; body: string; path: string }[]
    close: () => void
  }> {
    const received: { headers: IncomingMessage['headers']; body: string; path: string }[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        received.push({ headers: req.headers, body, path: req.url ?? '' })
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'artifact-1', url: 'http://gallery.local/a/1' }))
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as { port: number }
    return { url: `http://127.0.0.1:${port}`, received, close: () => server.close() }
  }

  // spawnSync would block the event loop the test server runs on: publish runs asynchronously here
  const run = (e: Record<string, string | undefined>, ...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, GALLERY_JWT: undefined, SVC_GALLERY_URL: undefined, ...env, ...e },
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('exit', (status) => resolve({ status, stdout, stderr }))
    })

  test('posts the primitive as a text artifact with the JWT from GALLERY_JWT', async () => {
    const g = await gallery()
    try {
      const id = JSON.parse(crystal(env, 'primitives', '--json').stdout)[0].id
      const r = await run({ SVC_GALLERY_URL: g.url, GALLERY_JWT: 'header.payload.signature' }, 'publish', id)
      expect(r.stderr).toBe('')
      expect(r.status).toBe(0)
      expect(r.stdout.trim()).toBe(`published ${id} to ${g.url}/artifacts (HTTP 201): http://gallery.local/a/1`)
      expect(g.received).toHaveLength(1)
      expect(g.received[0].path).toBe('/artifacts')
      expect(g.received[0].headers.authorization).toBe('Bearer header.payload.signature')
      const body = JSON.parse(g.received[0].body)
      expect(body.type).toBe('text')
      expect(body.content).toContain(`${id}  `)
      expect(body.content).toContain('persistence')
      expect(body.metadata.id).toBe(id)
    } finally {
      g.close()
    }
  })

  test('reads the JWT from the credentials file in the home folder, never from the working directory', async () => {
    const g = await gallery()
    const home = fresh('home')
    mkdirSync(join(home, '.config', 'resonant-crystal'), { recursive: true })
    writeFileSync(join(home, '.config', 'resonant-crystal', 'credentials.json'), JSON.stringify({ gallery_jwt: 'from-home' }))
    try {
      const id = JSON.parse(crystal(env, 'primitives', '--json').stdout)[0].id
      const r = await run({ SVC_GALLERY_URL: g.url, HOME: home }, 'publish', id)
      expect(r.status).toBe(0)
      expect(g.received[0].headers.authorization).toBe('Bearer from-home')
    } finally {
      g.close()
    }
  })

  test('with no credential: a clear error naming where it looks, exit 1, nothing sent', async () => {
    const g = await gallery()
    const home = fresh('nohome')
    try {
      const id = JSON.parse(crystal(env, 'primitives', '--json').stdout)[0].id
      const r = await run({ SVC_GALLERY_URL: g.url, HOME: home }, 'publish', id)
      expect(r.status).toBe(1)
      expect(r.stderr.trim()).toBe(
        `crystal: no gallery credential: set GALLERY_JWT, or put {"gallery_jwt": "<token>"} in ${join(home, '.config', 'resonant-crystal', 'credentials.json')}`,
      )
      expect(g.received).toHaveLength(0)
      const noUrl = await run({ GALLERY_JWT: 'x' }, 'publish', id)
      expect(noUrl.status).toBe(1)
      expect(noUrl.stderr).toContain('SVC_GALLERY_URL is not set')
    } finally {
      g.close()
    }
  })
})

describe('crystal explore', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('explore') }
  const small = ['--generations', '1', '--population', '4', '--size', '32']

  test('rotates materials round by round; --rounds stops it', () => {
    const r = crystal(env, 'explore', '--material', 'europium_crystal,vacuum', '--interval', '0', '--rounds', '3', ...small)
    expect(r.status).toBe(0)
    const rounds = r.stdout.trim().split('\n')
    for (const l of rounds)
      expect(l).toMatch(
        /best fitness [\d.]+; search archive QD-score [\d.]+, coverage [\d.]+% \(\d+ cells\); registered archive of \w+ now /,
      )
    expect(rounds.map((l) => l.match(/^round (\d) \((\w+)\)/)?.slice(1))).toEqual([
      ['1', 'europium_crystal'],
      ['2', 'vacuum'],
      ['3', 'europium_crystal'],
    ])
    expect(r.stderr).toMatch(/explored 3 rounds: \d+ registered from 12 genomes/)
  })

  test('Ctrl-C finishes the round, saves and exits 0 at once, not after the pause', async () => {
    const own = { SVC_CRYSTAL_DATA_DIR: fresh('interrupt') }
    const started = Date.now()
    const child = spawn(process.execPath, [BIN, 'explore', '--material', 'all', '--interval', '30', ...small], {
      env: { ...process.env, ...own },
    })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    await new Promise<void>((resolve) => child.stdout.on('data', (d) => ((stdout += d), stdout.includes('round 1') && resolve())))
    child.kill('SIGINT')
    const status = await new Promise((resolve) => child.on('exit', resolve))
    expect(status).toBe(0)
    expect(stderr).toContain('stopping: finishing this round')
    const said = Number(stderr.match(/explored 1 round: (\d+) registered/)![1])
    // what the round registered is on disk: saved, not lost to the interrupt
    expect(Date.now() - started).toBeLessThan(20_000) // the 30 s pause did not hold it
    const file = join(own.SVC_CRYSTAL_DATA_DIR, 'registry.json')
    const held = said > 0 ? JSON.parse(readFileSync(file, 'utf8')).primitives : []
    expect(held).toHaveLength(said)
    expect(stdout.trim().split('\n')).toHaveLength(1)
  })
})

describe('--debug', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('debug') }
  const program = join(env.SVC_CRYSTAL_DATA_DIR, 'small.crystal')
  writeFileSync(program, 'WRITE "x"\nRESONATE 50\n')

  test('a GPU run reports its transfers and how its waits for the device polled, once each, when the process ends', () => {
    const r = crystal(env, '--debug', '--backend', 'gpu', 'run', program, '--size', '16')
    expect(r.status).toBe(0)
    const transfers = r.stderr.match(/^crystal: gpu transfers \(N = 16, 1 field\): read back ([\d,]+) bytes in ([\d,]+) reads/gm)
    expect(transfers).toHaveLength(1)
    const polls = [...r.stderr.matchAll(/^crystal: dawn's polls for the device: ([\d,]+) at once, ([\d,]+) after a timer$/gm)]
    expect(polls).toHaveLength(1)
    // the run read back from the device, so it waited, and every wait polls at least once
    expect(Number(polls[0][1].replaceAll(',', '')) + Number(polls[0][2].replaceAll(',', ''))).toBeGreaterThan(0)
    // without --debug, neither
    const quiet = crystal(env, '--backend', 'gpu', 'run', program, '--size', '16')
    expect(quiet.stderr).not.toMatch(/gpu transfers|dawn's polls/)
  }, 240_000)

  test("evolve says where each generation's time went, a line a generation as it ends, phase by phase of its batch", () => {
    const args = ['--backend', 'cpu', 'evolve', '--material', 'europium_crystal', '--generations', '2', '--size', '16', '--population', '4']
    const r = crystal(env, '--debug', ...args)
    expect(r.status).toBe(0)
    const line = /^crystal: europium_crystal generation (\d) evaluated in ([\d.]+) s: waves ([\d.]+); batch: (.*)$/gm
    const lines = [...r.stderr.matchAll(line)]
    expect(lines.map((l) => l[1])).toEqual(['1', '2'])
    for (const [, , total, , batch] of lines) {
      // one batch, the clean fields and their rerun under noise; the CPU backend reads every plane where it is: no cells named and gathered
      expect(batch).toMatch(/^open [\d.]+, resonate [\d.]+, (dream [\d.]+, )?record [\d.]+, books [\d.]+, detect [\d.]+, perturb [\d.]+$/)
      // the phases fit in the generation's time
      const sum = [...batch.matchAll(/ ([\d.]+)/g)].reduce((a, m) => a + Number(m[1]), 0)
      expect(sum).toBeLessThanOrEqual(Number(total) + 0.01)
    }
    expect(crystal(env, ...args).stderr).not.toMatch(/evaluated in/)
  }, 120_000)

  test("evolve's engines, one a generation, are summed into one transfers line at the end, and Node warns of no listener leak", () => {
    const small = ['evolve', '--material', 'europium_crystal', '--size', '16', '--population', '2']
    // eleven engines: one exit listener each had passed Node's limit of 10
    const cpu = crystal(env, '--debug', '--backend', 'cpu', ...small, '--generations', '11')
    expect(cpu.status).toBe(0)
    expect(cpu.stderr).not.toMatch(/MaxListenersExceededWarning/)
    const gpu = crystal(env, '--debug', '--backend', 'gpu', ...small, '--generations', '3')
    expect(gpu.status).toBe(0)
    const lines = [...gpu.stderr.matchAll(/^crystal: gpu transfers \((.*)\): read back ([\d,]+) bytes in ([\d,]+) reads/gm)]
    // and the batches each generation extracts to perturb, counted in its line (6 fields: the 2 genomes,
    // their 2 noises alone and their rerun, in each of these generations)
    expect(lines.map((l) => l[1])).toEqual(['N = 16, 6 fields, 3 engines, 3 more made from them'])
    // each generation's line says what it read back (issue 22: at most 12 reads a generation; twice
    // here, the window, then the perturbation's answers with what detection names riding on them, 3
    // times where the stability maps planned a part wrong; a generation with no field to perturb would
    // read once, which this seed's do not), and the generations' reads and bytes add up to the line
    // at the end
    const generations = [
      ...gpu.stderr.matchAll(/^crystal: europium_crystal generation \d evaluated in .*; gpu: read back ([\d,]+) bytes in (\d+) reads$/gm),
    ]
    const numbers = (k: number) => generations.map((g) => Number(g[k].replaceAll(',', '')))
    expect(generations).toHaveLength(3)
    for (const reads of numbers(2)) expect([2, 3]).toContain(reads)
    expect(numbers(2).reduce((a, b) => a + b, 0)).toBe(Number(lines[0][3].replaceAll(',', '')))
    expect(numbers(1).reduce((a, b) => a + b, 0)).toBe(Number(lines[0][2].replaceAll(',', '')))
  }, 240_000)

  test('SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH reaches the GPU engines: 4 steps a dispatch, fewer dispatches, the same search; a bad value is refused', () => {
    const small = ['--debug', '--backend', 'gpu', 'evolve', '--material', 'europium_crystal', '--size', '16', '--population', '2']
    const run = (steps?: string) => {
      const r = crystal(
        { SVC_CRYSTAL_DATA_DIR: fresh(`steps-${steps}`), SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: steps },
        ...small,
        ...['--generations', '1', '--json'],
      )
      expect(r.status, r.stderr).toBe(0)
      const software = /gpu backend: asked for \(.*, software\)/.test(r.stderr)
      const dispatches = r.stderr.match(/^crystal: gpu transfers \(.*\): .* ([\d,]+) dispatches in/m)
      const { result } = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
      return { software, dispatches: Number(dispatches![1].replaceAll(',', '')), result }
    }
    // unset, one step a dispatch on any adapter (engine/backends/select.ts)
    const [unset, one, four] = [run(undefined), run('1'), run('4')]
    expect(unset.dispatches).toBe(one.dispatches)
    expect(four.dispatches).toBeLessThan(0.6 * one.dispatches)
    // the same bits on a software adapter; a GPU compiler may fuse multiply-adds in one kernel and not the other
    // (engine/field/field_step.test.ts), and a search follows any difference
    const search = (r: typeof one) => ({ ...r.result, registered: r.result.registered.map((p: { hash: string }) => p.hash) })
    if (unset.software) expect(search(four)).toEqual(search(one))
    const bad = crystal(
      { SVC_CRYSTAL_DATA_DIR: fresh('steps-bad'), SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH: '2' },
      ...small,
      '--generations',
      '1',
    )
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain('SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH must be 1 or 4, got "2"')
  }, 360_000)
})

describe('optional packages not installed', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('optional') }
  // a preload that makes the named packages look absent, to require() and import() alike
  const without = (hide: string, ...args: string[]) => {
    const r = spawnSync(process.execPath, ['--require', new URL('../testing/hide_modules.cjs', import.meta.url).pathname, BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env, CRYSTAL_TEST_HIDE: hide },
      timeout: 120_000,
    })
    return { status: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const program = join(env.SVC_CRYSTAL_DATA_DIR, 'small.crystal')
  writeFileSync(program, 'WRITE "x"\nRESONATE 10\n')

  test('without webgpu, --backend gpu says which package is missing and what to do; auto runs on the CPU and says why', () => {
    const gpu = without('webgpu', '--backend', 'gpu', 'run', program, '--size', '16')
    expect(gpu.status).toBe(1)
    expect(gpu.stderr.trim()).toBe(
      `crystal: ${program}:1:1: the GPU backend in Node needs the optional package webgpu, which is not installed (npm install webgpu, or use --backend cpu)`,
    )
    const auto = without('webgpu', 'run', program, '--size', '16')
    expect(auto.status).toBe(0)
    expect(auto.stdout).toContain('resonated 10 steps')
    expect(auto.stderr).toContain('cpu backend: the GPU backend in Node needs the optional package webgpu, which is not installed')
  })

  // before Node 22.13 the market store needs better-sqlite3; from then on Node's own node:sqlite
  const nodeSqlite = (() => {
    const m = process.getBuiltinModule?.('node:sqlite') as { StatementSync: { prototype: object } } | undefined
    return !!m && 'iterate' in m.StatementSync.prototype
  })()

  test(`without better-sqlite3 the market store ${nodeSqlite ? 'opens anyway (node:sqlite)' : 'says so'}`, () => {
    const dir = fresh('optional-markets')
    // a database to check: the server makes one on its first start
    expect(crystal({ SVC_CRYSTAL_DATA_DIR: dir }, 'markets', 'check').status).toBe(1)
    const made = spawnSync(
      process.execPath,
      [
        '-e',
        `import('${new URL('../dist/server/markets/store.js', import.meta.url).href}').then(({ MarketStore }) => new MarketStore({ dataDir: '${dir}', startingBalance: 0 }).close())`,
      ],
      { encoding: 'utf8' },
    )
    expect(made.status, made.stderr).toBe(0)
    const r = spawnSync(
      process.execPath,
      ['--require', new URL('../testing/hide_modules.cjs', import.meta.url).pathname, BIN, 'markets', 'check', '--json'],
      { encoding: 'utf8', env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dir, CRYSTAL_TEST_HIDE: 'better-sqlite3' } },
    )
    if (nodeSqlite) {
      expect(r.status, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout).ledger.ok).toBe(true)
    } else {
      expect(r.status).toBe(1)
      expect(r.stderr.trim()).toBe(
        `crystal: the market store on Node ${process.versions.node} (before 22.13, which has node:sqlite) needs the optional package better-sqlite3, which is not installed (npm install better-sqlite3, or run Node 22.13 or later)`,
      )
    }
  })
})

describe('usage', () => {
  const env = { SVC_CRYSTAL_DATA_DIR: fresh('usage') }

  test('--help for every command, with examples where they help', () => {
    for (const command of [
      'materials',
      'evolve',
      'explore',
      'primitives',
      'prune',
      'run',
      'publish',
      'serve',
      'archive',
      'watch',
      'write',
      'ask',
      'bench',
    ]) {
      const r = crystal(env, command, '--help')
      expect(r.status, command).toBe(0)
      expect(r.stdout, command).toContain(`Usage: crystal ${command}`)
    }
    for (const command of ['materials', 'evolve', 'explore', 'primitives', 'run', 'serve', 'archive', 'watch', 'write', 'ask'])
      expect(crystal(env, command, '--help').stdout).toContain('Examples:')
    const top = crystal(env, '--help')
    expect(top.stdout).toContain('CRYSTAL_BACKEND')
    expect(crystal(env, '--version').stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  test('an unknown command, a bad choice or a bad --backend is a usage error, exit 2', () => {
    const unknown = crystal(env, 'frob')
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frob'")
    const badArgument = crystal(env, 'bench', 'nope')
    expect(badArgument.status).toBe(2)
    expect(badArgument.stderr).toContain(
      'Allowed choices are field, dream, recall, memory, discovery, server, observatory, swarm, markets, station, open, all',
    )
    const badSize = crystal(env, 'bench', 'dream', '--sizes', '128,8')
    expect(badSize.status).toBe(2)
    expect(badSize.stderr).toContain('--sizes takes sides from 16 to 4096, got 8')
    const backend = crystal(env, '--backend', 'tpu', 'materials')
    expect(backend.status).toBe(2)
    expect(backend.stderr).toContain('Allowed choices are auto, gpu, cpu')
  })

  test('a data dir or reports folder that cannot be written is said before the work, not after it; an empty --data-dir is refused', () => {
    const file = join(env.SVC_CRYSTAL_DATA_DIR, 'a-file')
    writeFileSync(file, '')
    const evolve = crystal(
      env,
      '--backend',
      'cpu',
      '--data-dir',
      join(file, 'data'),
      'evolve',
      '--material',
      'silicon',
      '--generations',
      '50',
    )
    expect(evolve.status).toBe(2)
    expect(evolve.stderr).toContain(`the data dir ${join(file, 'data')} cannot be written (ENOTDIR); choose another with --data-dir`)
    // no generation ran: the progress would name one
    expect(evolve.stderr).not.toMatch(/generation|gen \d/i)
    const bench = crystal(env, '--backend', 'cpu', 'bench', 'field', '--sizes', '16', '--out', file)
    expect(bench.status).toBe(2)
    expect(bench.stderr).toContain(`the reports folder ${file} cannot be written (EEXIST); choose another with --out`)
    const empty = crystal(env, '--data-dir', '', 'primitives')
    expect(empty.status).toBe(2)
    expect(empty.stderr).toContain("option '--data-dir <dir>' argument '' is invalid. takes a folder, got an empty value")
  })

  test('a bad CRYSTAL_BENCH_ value stops its benchmark before any work, naming it; exit 2', () => {
    const seeds = crystal({ ...env, CRYSTAL_BENCH_SEEDS: 'abc' }, '--backend', 'cpu', 'bench', 'discovery')
    expect(seeds.status).toBe(2)
    expect(seeds.stderr).toContain('CRYSTAL_BENCH_SEEDS must be a whole number of at least 1, got "abc"')
    const size = crystal({ ...env, CRYSTAL_BENCH_SIZE: '8' }, '--backend', 'cpu', 'bench', 'discovery')
    expect(size.stderr).toContain('CRYSTAL_BENCH_SIZE must be a whole number from 16 to 4096, got "8"')
    // the memory benchmark reads CRYSTAL_BENCH_LONG before its first row (the half hour), not after its last
    const long = crystal({ ...env, CRYSTAL_BENCH_LONG: 'yes' }, '--backend', 'cpu', 'bench', 'memory')
    expect(long.status).toBe(2)
    expect(long.stderr).toContain('CRYSTAL_BENCH_LONG must be 0 or 1, got "yes"')
    expect(long.stderr).not.toContain('margin ideal_resonator')
  })

  test('CRYSTAL_BACKEND and SVC_CRYSTAL_DATA_DIR set but empty count as unset, as every other variable does', () => {
    // run in a fresh working directory with HOME there too: the default data dir is its .svc-crystal
    const home = fresh('empty-env')
    const run = (vars: Record<string, string>, ...args: string[]) =>
      spawnSync(process.execPath, [BIN, ...args], { cwd: home, encoding: 'utf8', env: { ...process.env, HOME: home, ...vars } })
    const r = run({ CRYSTAL_BACKEND: '', SVC_CRYSTAL_DATA_DIR: '' }, 'write', 'an empty variable', '--size', '16')
    expect(r.stderr).not.toContain('invalid')
    expect(r.status).toBe(0)
    // the medium went to the default data dir, not to the working directory
    expect(existsSync(join(home, '.svc-crystal', 'medium.bin'))).toBe(true)
    expect(existsSync(join(home, 'medium.bin'))).toBe(false)
    // control: a value that is set is still checked
    const bad = run({ CRYSTAL_BACKEND: 'tpu' }, 'materials')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain("from env 'CRYSTAL_BACKEND' is invalid")
  })

  test('starting the CLI loads no benchmark, server, market store or bus client: each waits for the command that uses it', () => {
    // a module hook that names every chunk of dist/bundle/ and every module of Fastify and NATS that the command
    // resolves; a chunk stands for the compiled modules it holds (dist/bundle/chunks.json), of which those of
    // dist/bench/ and dist/server/ are kept (they were a third of the start: 0.41 s where it took 0.25).
    // better-sqlite3 is required through createRequire, which such a hook does not see: dist/server/markets/
    // stands for it. The hook runs on its own thread: it writes to fd 2 at once, where process.stderr's writes
    // from there could be lost when the command exits soon after (Node 24 lost the NATS control's).
    const hook = join(env.SVC_CRYSTAL_DATA_DIR, 'hook.mjs')
    writeFileSync(
      hook,
      "import { writeSync } from 'node:fs'\nexport async function resolve(s, c, next) { const r = await next(s, c); if (/\\/dist\\/bundle\\/|node_modules\\/(fastify|@fastify|@nats-io)\\//.test(r.url)) writeSync(2, 'loaded ' + r.url + '\\n'); return r }\n",
    )
    const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(`file://${hook}`)})`
    const chunks: Record<string, string[]> = JSON.parse(readFileSync(new URL('../dist/bundle/chunks.json', import.meta.url), 'utf8'))
    const loaded = (args: string[], status = 0) => {
      const r = spawnSync(process.execPath, ['--import', register, BIN, ...args], {
        encoding: 'utf8',
        env: { ...process.env, ...env, SVC_NATS_URL: undefined },
      })
      expect(r.status, args.join(' ')).toBe(status)
      const urls = new Set(r.stderr.match(/loaded .*/g) ?? [])
      return [...urls].flatMap((l) => {
        const chunk = l.match(/\/dist\/bundle\/(.*)/)?.[1]
        return chunk ? chunks[chunk].filter((m) => /^(bench|server)\//.test(m)) : [l.replace(/.*\/node_modules\//, '')]
      })
    }
    // only the list of names `crystal bench --help` shows
    expect(loaded(['materials'])).toEqual(['bench/names.js'])
    // controls: the hook sees them where a command uses them (a market check with no database still opens the
    // store; archive with no bus loads the NATS client, then says it needs SVC_NATS_URL)
    expect(loaded(['markets', 'check'], 1)).toEqual(expect.arrayContaining(['server/markets/store.js', 'server/markets/sqlite.js']))
    expect(loaded(['archive'], 1).filter((m) => m.startsWith('@nats-io/')).length).toBeGreaterThan(0)
  })

  test('every worker the tree starts by URL is an entry of the chunks, beside them (scripts/bundle.mjs WORKERS)', () => {
    const root = new URL('../', import.meta.url)
    const sources = ['engine', 'server', 'bench', 'cli'].flatMap((d) =>
      readdirSync(new URL(d, root), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
        .map((f) => readFileSync(new URL(`${d}/${f}`, root), 'utf8')),
    )
    const started = sources.flatMap((text) => [...text.matchAll(/new URL\('\.\/([\w.]+\.js)', import\.meta\.url\)/g)].map((m) => m[1]))
    // control: the tree starts the workers this test is about
    expect(started).toEqual(expect.arrayContaining(['detect_worker.js', 'evolve_worker.js', 'run_worker.js']))
    for (const file of started) expect(existsSync(new URL(`dist/bundle/${file}`, root)), file).toBe(true)
  })

  test('bin runs the chunks unless tsc compiled the tree after them; with neither it says how to build', () => {
    // a package of stubs: each build's main says which it is
    const root = mkdtempSync(join(tmpdir(), 'crystal-bin-'))
    mkdirSync(join(root, 'bin'))
    writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n')
    writeFileSync(join(root, 'bin/crystal.js'), readFileSync(BIN))
    const run = () => spawnSync(process.execPath, [join(root, 'bin/crystal.js')], { encoding: 'utf8' })
    const r0 = run()
    expect(r0.status).toBe(1)
    expect(r0.stderr).toMatch(/not built yet; run `npm install`/)
    const build = (dir: string, at: number) => {
      mkdirSync(join(root, 'dist', dir), { recursive: true })
      writeFileSync(join(root, 'dist', dir, 'pipes.js'), 'export const quietWhenReaderLeaves = () => {}\n')
      writeFileSync(join(root, 'dist', dir, 'main.js'), `export async function main() { console.log('${dir}'); return 0 }\n`)
      for (const f of ['pipes.js', 'main.js']) utimesSync(join(root, 'dist', dir, f), at, at)
    }
    build('cli', 1000)
    expect(run().stdout).toBe('cli\n')
    build('bundle', 2000)
    expect(run().stdout).toBe('bundle\n')
    // the same time (npm's tarballs give every file one): the chunks
    build('cli', 2000)
    expect(run().stdout).toBe('bundle\n')
    // tsc alone after the chunks were made
    build('cli', 3000)
    expect(run().stdout).toBe('cli\n')
  })

  test('a bad value in the environment stops the command with one sentence naming the variable, exit 2', () => {
    for (const value of ['-5', 'abc']) {
      const r = crystal({ ...env, SVC_CONSCIOUSNESS_PERIOD_MS: value }, 'materials')
      expect(r.status).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr.trim()).toBe(
        `crystal: SVC_CONSCIOUSNESS_PERIOD_MS must be a whole number of at least 10, got "${value}" (see README, Environment)`,
      )
    }
  })

  test('bench honours --backend gpu: dream and recall run the GPU side alone, and say the agreement is not measured', () => {
    const out = fresh('bench-gpu')
    for (const [bench, ...more] of [['dream'], ['recall', '--memories', '4']]) {
      const r = crystal(env, '--backend', 'gpu', 'bench', bench, '--sizes', '16', ...more, '--out', out)
      expect(r.status, bench).toBe(0)
      expect(r.stderr, bench).toContain(`${bench}: N = 16 done: `)
      expect(r.stderr, bench).not.toMatch(/on the CPU/)
      expect(r.stdout, bench).toContain('the GPU side')
      const report = JSON.parse(readFileSync(join(out, `${bench}.json`), 'utf8'))
      expect(report.skipped, bench).toContain('cpu: --backend gpu (the GPU against CPU agreement is not measured)')
      const [row] = report.rows
      if (bench === 'dream') expect([row.cpu_ms, row.gpu_vs_cpu, typeof row.gpu_ms]).toEqual([null, null, 'number'])
      else expect([row.cpu, row.cpu_write_ms, row.same_ranking, typeof row.gpu.first_ms]).toEqual([null, null, null, 'number'])
    }
    // no adapter (a Vulkan driver file that is not there, named both ways: the loader takes VK_DRIVER_FILES
    // first, and a GPU machine may set it): one sentence before any bench runs, exit 1
    const missing = join(out, 'no-such-icd.json')
    const none = crystal(
      { ...env, VK_ICD_FILENAMES: missing, VK_DRIVER_FILES: missing },
      '--backend',
      'gpu',
      'bench',
      'field',
      '--sizes',
      '16',
      '--out',
      out,
    )
    expect(none.status).toBe(1)
    expect(none.stderr).toContain('crystal: no WebGPU adapter was found for --backend gpu (use --backend cpu or auto)')
    expect(none.stderr).not.toContain('field: ')
    // control: auto runs both sides, the CPU the GPU's control
    const both = crystal(env, 'bench', 'dream', '--sizes', '16', '--out', out, '--json')
    expect(both.status).toBe(0)
    const [row] = JSON.parse(readFileSync(join(out, 'dream.json'), 'utf8')).rows
    expect([typeof row.cpu_ms, typeof row.gpu_ms, typeof row.gpu_vs_cpu]).toEqual(['number', 'number', 'number'])
  })

  test('bench honours --backend cpu: CPU cases only, each named when it starts and when it ends', () => {
    const out = fresh('bench')
    const r = crystal(env, '--backend', 'cpu', 'bench', 'field', '--sizes', '16', '--out', out, '--json')
    expect(r.status).toBe(0)
    const cases = ['cpu N = 16, 1 thread', 'cpu N = 96 x 64 fields, 1 thread']
    for (const c of cases) {
      expect(r.stderr).toContain(`field: ${c} ...\n`)
      expect(r.stderr).toMatch(new RegExp(`field: ${c}: [\\d.]+ M cell-updates/s \\(\\d+ steps in [\\d.]+ s\\)`))
    }
    expect(r.stderr).not.toContain('gpu')
    const report = JSON.parse(readFileSync(join(out, 'field.json'), 'utf8'))
    expect(report.results.length).toBeGreaterThan(0)
    expect(report.results.every((x: { backend: string }) => x.backend === 'cpu')).toBe(true)
  })

  // three compiles of the field step on SwiftShader (some 8 s each here, more on a loaded machine)
  test("bench open times the device and each kernel's compile, every kernel once and ahead; with --backend cpu it is skipped", {
    timeout: 400_000,
  }, () => {
    const out = fresh('bench-open')
    const r = spawnSync(process.execPath, [BIN, 'bench', 'open', '--out', out, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 360_000,
    })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toContain('open: round 3')
    const report = JSON.parse(readFileSync(join(out, 'open.json'), 'utf8'))
    const entries: string[] = report.compiles.map((c: { entry: string }) => c.entry)
    // the field step's kernels, each compiled once for the whole process (two generations, four engines)
    for (const entry of ['step', 'energy', 'potential', 'gather', 'inject'])
      expect(
        entries.filter((e) => e === entry),
        entry,
      ).toHaveLength(1)
    expect(report.compile_ms).toBeLessThan(report.first_generation_ms)
    // every one of them compiled ahead, off the calling thread (engine/gpu/context.ts compileAhead)
    expect(report.compiles.filter((c: { ahead: boolean }) => !c.ahead)).toEqual([])
    expect(report.blocking_ms).toBe(0)
    expect(report.async_wall_ms).toBeGreaterThan(0)
    expect(report.sync_wall_ms).toBeGreaterThan(0)
    const cpu = crystal(env, '--backend', 'cpu', 'bench', 'open', '--out', out, '--json')
    expect(cpu.status).toBe(0)
    expect(JSON.parse(cpu.stdout).open.skipped).toEqual(['open: --backend cpu (it measures the GPU backend)'])
  })

  test('piping into a reader that closes early is not an error', () => {
    const r = spawnSync('bash', ['-c', `node ${BIN} materials --json | head -1`], { encoding: 'utf8', env: { ...process.env, ...env } })
    expect(r.stdout.trim()).toBe('[')
    expect(r.stderr).toBe('')
  })
})

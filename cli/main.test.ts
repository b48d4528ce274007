// `crystal` as a user runs it: the built command in a child process, its output and exit status.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'crystal-cli-'))

function crystal(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir } })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('crystal materials', () => {
  test('prints a table of the eight built-ins', () => {
    const r = crystal('materials')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/Name\s+│\s+Wave speed/)
    for (const name of ['vacuum', 'ideal_resonator', 'optical_cavity', 'europium_crystal', 'silicon', 'diamond_nv', 'metamaterial', 'graphene_model']) {
      expect(r.stdout).toContain(name)
    }
    expect(r.stderr).toBe('')
  })

  test('--json prints machine-readable materials with their source', () => {
    const r = crystal('materials', '--json')
    expect(r.status).toBe(0)
    const rows = JSON.parse(r.stdout)
    expect(rows).toHaveLength(8)
    expect(rows.find((m: { name: string }) => m.name === 'europium_crystal')).toMatchObject({ temperature_k: 4, source: 'built-in' })
  })

  test('--material-file adds a material; a bad one fails with one sentence naming file and field, exit 1', () => {
    const good = join(dataDir, 'glass.json')
    writeFileSync(good, JSON.stringify({ name: 'my_glass', description: 'test', wave_speed: 0.4, damping: 0.001, boundary_reflectivity: 0.5, nonlinearity: 0, viscosity: 0, temperature_k: 300, noise_coupling: 0 }))
    const ok = crystal('materials', '--json', '--material-file', good)
    expect(JSON.parse(ok.stdout).map((m: { name: string }) => m.name)).toContain('my_glass')

    const bad = join(dataDir, 'bad.json')
    writeFileSync(bad, JSON.stringify({ name: 'bad', description: 'x', wave_speed: 0.9 }))
    const r = crystal('materials', '--material-file', bad)
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(`crystal: ${bad}: field "damping" is missing`)
    expect(r.stderr).not.toContain('    at ') // no stack trace without --debug
  })

  test('--fingerprint adds the measured columns', () => {
    const r = crystal('materials', '--json', '--fingerprint')
    expect(r.status).toBe(0)
    const vacuum = JSON.parse(r.stdout).find((m: { name: string }) => m.name === 'vacuum')
    expect(vacuum.fingerprint.energy_retention).toBeLessThan(1e-6)
    expect(vacuum.fingerprint.dispersion).toBeGreaterThan(0)
  })
})

describe('usage', () => {
  test('--help and --version', () => {
    const help = crystal('--help')
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('materials')
    expect(help.stdout).toContain('CRYSTAL_BACKEND')
    expect(crystal('--version').stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  test('an unknown command or a bad --backend is a usage error, exit 2', () => {
    const unknown = crystal('frob')
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frob'")
    const badArgument = crystal('bench', 'nope')
    expect(badArgument.status).toBe(2)
    expect(badArgument.stderr).toContain('Allowed choices are field, memory, discovery, all')
    const backend = crystal('--backend', 'tpu', 'materials')
    expect(backend.status).toBe(2)
    expect(backend.stderr).toContain('Allowed choices are auto, gpu, cpu')
  })
})

// The measurable rules of the materials (DESIGN.md section 5) and the refusal of bad material files.
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { MaterialSchema } from '../contracts/material.js'
import { CrystalError } from '../errors.js'
import { engineOn } from '../../testing/backends.js'
import { cosine } from '../util/vector.js'
import schemaFile from '../../materials/materials.schema.json' with { type: 'json' }
import { fingerprint, fingerprintDistance, FINGERPRINT_MIN_DIFFERENCE } from './fingerprint.js'
import { BUILT_IN_MATERIALS } from './materials.js'
import { stepParams } from './params.js'
import { loadCatalog, loadMaterialFile } from './materials.node.js'

const CENTRE = { x: 0.5, y: 0.5, radius: 0.06, amplitude: 1, frequency: 1, phase: 0 }

describe('the built-ins behave measurably differently', () => {
  test('the eight built-ins are there', () => {
    expect(BUILT_IN_MATERIALS.map((m) => m.name).sort()).toEqual([
      'diamond_nv',
      'europium_crystal',
      'graphene_model',
      'ideal_resonator',
      'metamaterial',
      'optical_cavity',
      'silicon',
      'vacuum',
    ])
  })

  test('ideal_resonator keeps at least 10 times the energy vacuum keeps after 2,000 steps from the same pulse', async () => {
    const kept: Record<string, number> = {}
    for (const material of ['ideal_resonator', 'vacuum']) {
      const e = await engineOn('cpu', { size: 64, material })
      await e.pulse(CENTRE)
      await e.step(2000)
      kept[material] = (await e.books())[0].energy
      e.destroy()
    }
    expect(kept.ideal_resonator).toBeGreaterThan(0)
    expect(kept.ideal_resonator).toBeGreaterThanOrEqual(10 * kept.vacuum)
  })

  test('europium_crystal holds a written pattern at 4 K (correlation >= 0.8) and loses it at 300 K (< 0.5)', async () => {
    const after1000 = async (temperature_k: number) => {
      const e = await engineOn('cpu', { size: 64, material: 'europium_crystal', temperature_k })
      await e.write('the cold glyph remembers', 1)
      await e.step(1000)
      const { u } = await e.read()
      e.destroy()
      return u
    }
    const noiseless = await after1000(0)
    expect(cosine(await after1000(4), noiseless)).toBeGreaterThanOrEqual(0.8)
    expect(cosine(await after1000(300), noiseless)).toBeLessThan(0.5)
  })

  test('europium_crystal dephases as it warms: viscosity 0.001 + 0.01 T / 300, and a temperature past the stability bound is refused, the old one kept', async () => {
    const e = await engineOn('cpu', { size: 16, material: 'europium_crystal' })
    try {
      const viscosity = (kelvin: number) =>
        stepParams({ n: 16, fields: 1, material: e.material, temperature_k: kelvin, noise: 0 }).viscosity
      expect(viscosity(300) / viscosity(4)).toBeGreaterThan(8)
      expect(() => e.setTemperature(9000)).toThrow(
        /^europium_crystal is unstable at 9000 K: its dephasing raises the viscosity past the step's stability bound/,
      )
      expect(e.temperature_k).toBe(4)
      await expect(engineOn('cpu', { size: 16, material: 'europium_crystal', temperature_k: 9000 })).rejects.toThrow('unstable at 9000 K')
    } finally {
      e.destroy()
    }
  })

  test('every pair of built-ins differs on the fingerprint (energy retention, dispersion, noise)', async () => {
    const prints = await Promise.all(BUILT_IN_MATERIALS.map(async (m) => [m.name, await fingerprint(m)] as const))
    for (let i = 0; i < prints.length; i++) {
      for (let j = i + 1; j < prints.length; j++) {
        const d = fingerprintDistance(prints[i][1], prints[j][1])
        expect(d.difference, `${prints[i][0]} vs ${prints[j][0]}`).toBeGreaterThanOrEqual(FINGERPRINT_MIN_DIFFERENCE)
      }
    }
  })
})

describe('material files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-materials-'))
  const good = { ...BUILT_IN_MATERIALS[1], name: 'my_glass', description: 'a test glass' }
  const file = (name: string, body: unknown) => {
    const path = join(dir, name)
    writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body))
    return path
  }
  const refusal = (path: string) => {
    try {
      loadMaterialFile(path)
    } catch (e) {
      expect(e).toBeInstanceOf(CrystalError)
      expect((e as CrystalError).code).toBe('bad_material')
      return e as CrystalError
    }
    throw new Error(`${path} was accepted`)
  }

  test('materials/materials.schema.json is the TypeBox contract (run `npm run schema` after changing it)', () => {
    const { $schema, ...rest } = schemaFile as Record<string, unknown>
    expect($schema).toContain('json-schema.org')
    expect(rest).toEqual(JSON.parse(JSON.stringify(MaterialSchema)))
  })

  test('a good file loads and joins the catalog, from --material-file and from <data dir>/materials/', () => {
    expect(loadMaterialFile(file('glass.json', good)).material.name).toBe('my_glass')
    const dataDir = mkdtempSync(join(tmpdir(), 'crystal-data-'))
    mkdirSync(join(dataDir, 'materials'))
    writeFileSync(join(dataDir, 'materials', 'glass.json'), JSON.stringify(good))
    const catalog = loadCatalog(dataDir)
    expect(catalog.get('my_glass').description).toBe('a test glass')
    expect(catalog.list()).toHaveLength(9)
  })

  test('malformed JSON names the file', () => {
    const path = file('broken.json', '{"name": "x",')
    expect(refusal(path).message).toMatch(new RegExp(`^${path}: not valid JSON`))
  })

  test('a missing field, an out-of-range value and an unknown field each name the file and the field', () => {
    const { damping: _, ...noDamping } = good
    let e = refusal(file('missing.json', noDamping))
    expect(e.message).toBe(`${join(dir, 'missing.json')}: field "damping" is missing`)
    expect(e.where).toEqual({ file: join(dir, 'missing.json'), field: 'damping' })
    e = refusal(file('range.json', { ...good, boundary_reflectivity: 1.5 }))
    expect(e.message).toContain('field "boundary_reflectivity" expected number to be less or equal to 1')
    e = refusal(file('extra.json', { ...good, colour: 'blue' }))
    expect(e.where.field).toBe('colour')
  })

  test('a combination that would make the step unstable is refused before anything runs', () => {
    const e = refusal(file('unstable.json', { ...good, wave_speed: 0.7, viscosity: 0.05 }))
    expect(e.message).toContain('field "wave_speed": the step is unstable')
  })

  test('an unreadable file is a clear error', () => {
    expect(refusal(join(dir, 'nope.json')).message).toContain('cannot read the material file (ENOENT)')
  })
})

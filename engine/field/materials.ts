// The material catalog: the eight built-ins (materials/*.json, validated like any other file) plus
// whatever the caller adds (a --material-file, <data dir>/materials/). Later entries of the same
// name replace earlier ones, so a user can tune a built-in by dropping a file of the same name.
import { parseMaterial, type Material } from '../contracts/material.js'
import { CrystalError } from '../errors.js'
import diamond_nv from '../../materials/diamond_nv.json' with { type: 'json' }
import europium_crystal from '../../materials/europium_crystal.json' with { type: 'json' }
import graphene_model from '../../materials/graphene_model.json' with { type: 'json' }
import ideal_resonator from '../../materials/ideal_resonator.json' with { type: 'json' }
import metamaterial from '../../materials/metamaterial.json' with { type: 'json' }
import optical_cavity from '../../materials/optical_cavity.json' with { type: 'json' }
import silicon from '../../materials/silicon.json' with { type: 'json' }
import vacuum from '../../materials/vacuum.json' with { type: 'json' }

const RAW_BUILT_INS = { vacuum, ideal_resonator, optical_cavity, europium_crystal, silicon, diamond_nv, metamaterial, graphene_model }

export const BUILT_IN_MATERIALS: readonly Material[] = Object.entries(RAW_BUILT_INS).map(([name, raw]) =>
  parseMaterial(raw, `materials/${name}.json`),
)

export interface CatalogEntry {
  material: Material
  /** 'built-in', or the file it came from. */
  source: string
}

export class MaterialCatalog {
  private readonly entries = new Map<string, CatalogEntry>()

  constructor(extra: CatalogEntry[] = []) {
    for (const m of BUILT_IN_MATERIALS) this.entries.set(m.name, { material: m, source: 'built-in' })
    for (const e of extra) this.entries.set(e.material.name, e)
  }

  list(): CatalogEntry[] {
    return [...this.entries.values()]
  }

  get(name: string): Material {
    const entry = this.entries.get(name)
    if (!entry) {
      throw new CrystalError(
        'unknown_material',
        `unknown material "${name}"`,
        { field: 'material' },
        `known materials: ${[...this.entries.keys()].join(', ')}`,
      )
    }
    return entry.material
  }
}

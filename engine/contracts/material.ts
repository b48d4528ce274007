// The material contract: the TypeBox schema is the single source of the type, the validation and
// materials/materials.schema.json (written by scripts/gen.mjs, checked by a test).
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { CrystalError } from '../errors.js'

export const MaterialSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z][a-z0-9_]*$', maxLength: 64, description: 'snake_case identifier' }),
    description: Type.String({ maxLength: 500 }),
    wave_speed: Type.Number({
      exclusiveMinimum: 0,
      // biome-ignore lint/suspicious/noApproximativeNumericConstant: a bound people can type in a material file, just under 1/sqrt(2)
      maximum: 0.7071,
      description: 'c, cells per step; leapfrog is stable for c <= 1/sqrt(2)',
    }),
    damping: Type.Number({ minimum: 0, maximum: 0.5, description: 'g, bulk damping per step' }),
    boundary_reflectivity: Type.Number({ minimum: 0, maximum: 1, description: '1 = perfect mirror, 0 = fully absorbing sponge' }),
    nonlinearity: Type.Number({ minimum: 0, maximum: 1, description: 'b, soft saturation b u^3 / (1 + u^2)' }),
    viscosity: Type.Number({ minimum: 0, maximum: 0.1, description: 'v, damps high spatial frequencies: v (L(u) - L(u_prev))' }),
    temperature_k: Type.Number({ minimum: 0, maximum: 10000, description: 'default temperature in kelvin' }),
    noise_coupling: Type.Number({ minimum: 0, maximum: 0.1, description: 'thermal noise amplitude at 300 K' }),
    dephasing: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 0.1,
        description:
          'viscosity added per 300 K: thermal phase noise damps the coherent wave, the more the higher its wavenumber (default 0)',
      }),
    ),
  },
  { $id: 'https://resonant-crystal.dev/materials.schema.json', title: 'Resonant Crystal material', additionalProperties: false },
)

export type Material = Static<typeof MaterialSchema>

/** Strength of the boundary sponge at the edge for a fully absorbing material (per step). */
export const SPONGE_MAX = 0.3

/**
 * The viscosity in force at a temperature. Thermal fluctuations of the local wave speed jitter a
 * mode's phase by about its wavenumber k times the fluctuation, so over many steps its coherent
 * amplitude decays at a rate ~ k^2 times their variance, which grows as T: for the coherent field
 * this is a viscosity linear in T (derivation in docs/physics.md).
 */
export function viscosityAt(m: Material, temperature_k: number): number {
  return m.viscosity + ((m.dephasing ?? 0) * temperature_k) / 300
}

/**
 * Von Neumann bound of the damped, viscous, saturating leapfrog (derivation in docs/physics.md):
 * with the Laplacian's most negative eigenvalue -8, the step is stable when
 * c^2 + (g + sponge)/4 + 2v + b/8 <= 1/2.
 */
export function stabilityMargin(m: Material, temperature_k = m.temperature_k): number {
  const sponge = SPONGE_MAX * (1 - m.boundary_reflectivity)
  return 0.5 - (m.wave_speed ** 2 + (m.damping + sponge) / 4 + 2 * viscosityAt(m, temperature_k) + m.nonlinearity / 8)
}

/** Validates an untrusted object as a material; the error names the source, the field and the reason. */
export function parseMaterial(value: unknown, source: string): Material {
  const first = Value.Errors(MaterialSchema, value).First()
  if (first) {
    const field = first.path.replace(/^\//, '').replace(/\//g, '.') || '(root)'
    const reason = first.message === 'Expected required property' ? 'is missing' : first.message.replace(/^Expected/, 'expected')
    throw new CrystalError('bad_material', `${source}: field "${field}" ${reason}`, { file: source, field })
  }
  const material = value as Material
  const margin = stabilityMargin(material)
  if (margin < 0) {
    throw new CrystalError(
      'bad_material',
      `${source}: field "wave_speed": the step is unstable (c^2 + (damping + sponge)/4 + 2 viscosity + nonlinearity/8 exceeds 1/2 by ${(-margin).toFixed(4)}); lower wave_speed, viscosity or nonlinearity`,
      { file: source, field: 'wave_speed' },
    )
  }
  return material
}

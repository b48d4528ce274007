// `crystal materials`: the catalog as a table or JSON, optionally with measured fingerprints.
import Table from 'cli-table3'
import type { Command } from 'commander'
import { fingerprint, type Fingerprint } from '../../engine/field/fingerprint.js'
import type { CliContext } from '../context.js'

export function registerMaterials(cli: Command, ctx: () => CliContext): void {
  cli
    .command('materials')
    .description('list the materials: the eight built-ins, <data dir>/materials/*.json and --material-file')
    .option('--json', 'print JSON instead of a table')
    .option('--material-file <file...>', 'also load these material files')
    .option('--fingerprint', "measure each material's fingerprint (energy retention, dispersion, noise; about a second each)")
    .addHelpText(
      'after',
      '\nExamples:\n  crystal materials\n  crystal materials --json --fingerprint\n  crystal materials --material-file my_glass.json',
    )
    .action(async (o: { json?: boolean; materialFile?: string[]; fingerprint?: boolean }) => {
      const entries = ctx().catalog(o.materialFile).list()
      const prints = new Map<string, Fingerprint>()
      if (o.fingerprint) for (const e of entries) prints.set(e.material.name, await fingerprint(e.material))
      if (o.json) {
        const rows = entries.map((e) => ({
          ...e.material,
          source: e.source,
          ...(o.fingerprint ? { fingerprint: prints.get(e.material.name) } : {}),
        }))
        process.stdout.write(JSON.stringify(rows, null, 2) + '\n')
        return
      }
      const head = [
        'Name',
        'Wave speed',
        'Damping',
        'Reflectivity',
        'Nonlinearity',
        'Viscosity',
        'Dephasing',
        'Temp. (K)',
        'Noise coupling',
        'Source',
      ]
      if (o.fingerprint) head.push('Retention', 'Dispersion', 'Noise RMS')
      const table = new Table({ head, style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } })
      for (const { material: m, source } of entries) {
        const row: (string | number)[] = [
          m.name,
          m.wave_speed,
          m.damping,
          m.boundary_reflectivity,
          m.nonlinearity,
          m.viscosity,
          m.dephasing ?? 0,
          m.temperature_k,
          m.noise_coupling,
          source,
        ]
        const f = prints.get(m.name)
        if (f) row.push(f.energy_retention.toExponential(2), f.dispersion.toFixed(3), f.noise.toExponential(2))
        table.push(row)
      }
      process.stdout.write(table.toString() + '\n')
    })
}

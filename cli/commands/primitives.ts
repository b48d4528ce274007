// `crystal primitives` and `crystal prune`: the registry for people (tables, one in full) and for
// machines (--json, --export), and the quality-ranked sweep down to the caps.
import Table from 'cli-table3'
import { Option, type Command } from 'commander'
import { CLASS_NAMES, CLASS_TOKENS, type Primitive } from '../../engine/contracts/registry.js'
import { CrystalError } from '../../engine/errors.js'
import { quality } from '../../engine/registry/registry.js'
import { realNumber, type CliContext } from '../context.js'

const pct = (v: number) => `${(100 * v).toFixed(1)}`
const tableStyle = { style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } }

export function primitivesTable(list: readonly Primitive[], similarity?: Map<string, number>): string {
  const head = ['ID', 'Type', 'Persistence %', 'Noise Tol. %', 'Material', 'Lineage', 'Hash']
  if (similarity) head.push('Similarity')
  const t = new Table({ head, ...tableStyle })
  for (const p of list) {
    const row = [
      p.id,
      `${CLASS_NAMES[p.class]} (${p.class})`,
      pct(p.persistence),
      pct(p.noise_tolerance),
      p.material,
      p.lineage.join(' ') || '-',
      p.hash.slice(0, 12),
    ]
    if (similarity) row.push(similarity.get(p.id)!.toFixed(3))
    t.push(row)
  }
  return t.toString()
}

/** One primitive in full, as text (also what `publish` sends). */
export function describePrimitive(p: Primitive): string {
  const lines = [
    `${p.id}  ${p.class}`,
    `uuid             ${p.uuid}`,
    `class            ${CLASS_NAMES[p.class]}`,
    `material         ${p.material}`,
    `persistence      ${pct(p.persistence)}%`,
    `noise tolerance  ${pct(p.noise_tolerance)}%`,
    `quality          ${quality(p).toFixed(3)}`,
    `lineage          ${p.lineage.join(', ') || '(none)'}`,
    `hash             ${p.hash}`,
    `discovered at    ${p.discovered_at}`,
    `provenance       ${p.provenance ? `${p.provenance.node} (${p.provenance.origin_id}, imported ${p.provenance.imported_at})` : 'local'}`,
    `signature        ${p.signature.length} floats`,
    `genome           ${p.genome.pulses.length} pulse(s), resonate ${p.genome.resonate_steps} steps, dream ${p.genome.dream}`,
    ...p.genome.pulses.map(
      (q, i) =>
        `  pulse ${i + 1}        x ${q.x.toFixed(3)}  y ${q.y.toFixed(3)}  radius ${q.radius.toFixed(3)}  amplitude ${q.amplitude.toFixed(3)}  frequency ${q.frequency.toFixed(3)}  phase ${q.phase.toFixed(3)}`,
    ),
    'metrics',
    ...Object.entries(p.metrics).map(([k, v]) => `  ${k.padEnd(15)} ${Number.isInteger(v) ? v : v.toFixed(4)}`),
  ]
  return lines.join('\n')
}

export function registerPrimitives(cli: Command, ctx: () => CliContext): void {
  cli
    .command('primitives')
    .description('list the registry, show one primitive in full, or export it as JSON')
    .argument('[id]', 'a primitive to show in full (CRY-000001 or cry-000001, or its uuid)')
    .addOption(
      new Option('--export', 'print the whole registry file as JSON on stdout').conflicts([
        'json',
        'class',
        'material',
        'minPersistence',
        'similar',
      ]),
    )
    .option('--json', 'print the (filtered) primitives as JSON')
    .option('--class <token>', `only this class: ${CLASS_TOKENS.join(', ')}`)
    .option('--material <name>', 'only this material')
    .option('--min-persistence <x>', 'only primitives at least this persistent (0 to 1)', realNumber('--min-persistence', 0, 1))
    .option('--similar <id>', 'the 10 primitives most similar to this one, by signature')
    .addHelpText(
      'after',
      '\nExamples:\n  crystal primitives\n  crystal primitives --class echo_ring --min-persistence 0.5\n  crystal primitives CRY-000012\n  crystal primitives --similar CRY-000012\n  crystal primitives --export > registry.json',
    )
    .action(
      async (
        id: string | undefined,
        o: { export?: boolean; json?: boolean; class?: string; material?: string; minPersistence?: number; similar?: string },
      ) => {
        const c = ctx()
        const registry = c.registry()
        // an id shows that one primitive whole: a filter or a ranking beside it would be silently ignored
        const beside = [
          o.export && '--export',
          o.similar && '--similar',
          o.class && '--class',
          o.material && '--material',
          o.minPersistence !== undefined && '--min-persistence',
        ].filter(Boolean)
        if (id && beside.length)
          throw new CrystalError(
            'bad_argument',
            `${beside.join(', ')} cannot be used with an id (${id}): the id shows that one primitive`,
            { field: 'id' },
          )
        if (o.export) {
          process.stdout.write(JSON.stringify(await registry.file(), null, 2) + '\n')
          return
        }
        if (id) {
          const p = await registry.get(id)
          process.stdout.write((o.json ? JSON.stringify(p, null, 2) : describePrimitive(p)) + '\n')
          return
        }
        if (o.class && !(CLASS_TOKENS as readonly string[]).includes(o.class)) {
          throw new CrystalError('bad_argument', `unknown class "${o.class}"`, { field: 'class' }, `classes: ${CLASS_TOKENS.join(', ')}`)
        }
        let list: Primitive[]
        let similarity: Map<string, number> | undefined
        if (o.similar) {
          const hits = await registry.similar(o.similar, 10)
          list = hits.map((h) => h.primitive)
          similarity = new Map(hits.map((h) => [h.primitive.id, h.similarity]))
        } else list = await registry.list()
        // a material neither known here nor held (an import may hold a peer's own) is a typo, not an empty answer
        if (o.material && !(await registry.list()).some((p) => p.material === o.material)) c.catalog().get(o.material)
        list = list.filter(
          (p) =>
            (!o.class || p.class === o.class) &&
            (!o.material || p.material === o.material) &&
            (o.minPersistence === undefined || p.persistence >= o.minPersistence),
        )
        if (o.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n')
        else if (!list.length) process.stdout.write('no primitives match\n')
        else process.stdout.write(primitivesTable(list, similarity) + `\n${list.length} primitive${list.length === 1 ? '' : 's'}\n`)
      },
    )

  cli
    .command('prune')
    .description('sweep the registry down to its caps, lowest quality (0.7 persistence + 0.3 noise tolerance) first')
    .option('--dry-run', 'show what would go, change nothing')
    .option('--json', 'print the removals as JSON')
    .addHelpText(
      'after',
      '\nCaps: SVC_CRYSTAL_BUCKET_CAP per class x material (default 150), SVC_CRYSTAL_MAX_PRIMITIVES in all (default 5000).',
    )
    .action(async (o: { dryRun?: boolean; json?: boolean }) => {
      const registry = ctx().registry()
      const removed = await registry.prune(!!o.dryRun)
      if (o.json) {
        process.stdout.write(JSON.stringify({ dry_run: !!o.dryRun, removed }, null, 2) + '\n')
        return
      }
      if (!removed.length) {
        process.stdout.write(
          `nothing to prune: the registry is within its caps (bucket ${registry.limits.bucket_cap}, total ${registry.limits.max_primitives})\n`,
        )
        return
      }
      for (const r of removed)
        process.stdout.write(
          `${o.dryRun ? 'would remove' : 'removed'} ${r.id} (quality ${r.quality.toFixed(3)}, over the ${r.reason === 'bucket_cap' ? 'bucket cap' : 'total cap'})\n`,
        )
      process.stdout.write(`${o.dryRun ? 'would remove' : 'removed'} ${removed.length} primitive${removed.length === 1 ? '' : 's'}\n`)
    })
}

// The archive as a map (docs/discovery.md): a material's registered primitives placed in the MAP-Elites
// grid (class x size x elongation x annularity x standing), each cell coloured by its elite's fitness;
// click a cell for its elite. Per class, rows are size bins; columns nest elongation, then annularity,
// then standing.
import { useEffect, useMemo, useState } from 'react'
import { get } from '../api'
import { CLASS_NAMES, CLASS_TOKENS } from '../../engine/contracts/registry'
import { ARCHIVE_CELLS, binsOf, registeredArchive, type Placeable } from '../../engine/discovery/archive'

const [SIZES, ELONGATIONS, ANNULARITIES, STANDINGS] = [binsOf('size'), binsOf('elongation'), binsOf('annularity'), binsOf('standing')]
/** The columns of a class's rows: elongation, annularity, standing, nested in that order. */
const COLUMNS = ELONGATIONS * ANNULARITIES * STANDINGS
const columnOf = (k: number) => ({
  elongation: Math.floor(k / (ANNULARITIES * STANDINGS)),
  annularity: Math.floor(k / STANDINGS) % ANNULARITIES,
  standing: k % STANDINGS,
})
/** Dark blue (low fitness) to amber (high). */
const colour = (f: number) => `hsl(${220 - 180 * f}, 70%, ${25 + 30 * f}%)`
/** The most the server gives in one page of /primitives. */
const PAGE = 500

/** Every registered primitive of a material, page by page (the map must see them all to agree with evolve's figure). */
async function primitivesOf(material: string): Promise<Placeable[]> {
  const out: Placeable[] = []
  for (;;) {
    const page = await get<{ total: number; items: Placeable[] }>(
      `/primitives?material=${encodeURIComponent(material)}&limit=${PAGE}&offset=${out.length}`,
    )
    out.push(...page.items)
    if (out.length >= page.total || !page.items.length) return out
  }
}

export function ArchiveMap({ material, onSelect }: { material: string; onSelect: (id: string) => void }) {
  const [items, setItems] = useState<Placeable[]>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    if (!material) return
    primitivesOf(material).then(
      (d) => (setItems(d), setError(undefined)),
      (e: Error) => setError(e.message),
    )
  }, [material])
  // the same function evolve reports the registered archive with: the fittest primitive per cell
  const { archive, report } = useMemo(() => registeredArchive(items, material), [items, material])
  if (!material) return <p className="muted">Choose a material (filter above) to see its archive map.</p>
  if (error) return <p role="alert">{error}</p>
  return (
    <figure className="archive-map" data-testid="archive-map">
      <figcaption>
        registered archive of {material}: {report.cells} of {ARCHIVE_CELLS} cells ({(100 * report.coverage).toFixed(1)}%), QD-score{' '}
        <span data-testid="archive-qd">{report.qd_score.toFixed(2)}</span> over {report.placed} registered primitives
        {report.unplaced ? ` · ${report.unplaced} older primitives without descriptors not shown` : ''}
        <span className="muted" data-testid="archive-note">
          {' '}
          · The fittest registered primitive of {material} per cell, from every run: the figure `crystal evolve` and the Lab report as the
          registered archive after a run. An evolve's search archive QD-score is another sum: its own elites, including those novelty turned
          away as duplicates of primitives already held, and none of earlier runs.
        </span>
      </figcaption>
      <table>
        <thead>
          <tr>
            <th>size \ elongation</th>
            {Array.from({ length: ELONGATIONS }, (_, e) => (
              <th key={e} colSpan={ANNULARITIES * STANDINGS}>
                {e + 1}
              </th>
            ))}
          </tr>
        </thead>
        {CLASS_TOKENS.map((c) => (
          <tbody key={c}>
            <tr>
              <th scope="rowgroup" colSpan={COLUMNS + 1}>
                {CLASS_NAMES[c]}
              </th>
            </tr>
            {Array.from({ length: SIZES }, (_, size) => (
              <tr key={size}>
                <th scope="row">{size + 1}</th>
                {Array.from({ length: COLUMNS }, (_, k) => {
                  const cell = { class: c, size, ...columnOf(k) }
                  const elite = archive.elite(cell)?.item
                  const where = `${CLASS_NAMES[c]}, size ${size + 1}/${SIZES}, elongation ${cell.elongation + 1}/${ELONGATIONS}, annularity ${cell.annularity + 1}/${ANNULARITIES}, standing ${cell.standing + 1}/${STANDINGS}`
                  return (
                    <td key={k} className={k % (ANNULARITIES * STANDINGS) === 0 ? 'group' : undefined}>
                      {elite ? (
                        <button
                          className="cell"
                          style={{ background: colour(elite.metrics.fitness) }}
                          title={`${where}: ${elite.id}, fitness ${elite.metrics.fitness.toFixed(3)}`}
                          aria-label={`${where}: ${elite.id}`}
                          onClick={() => onSelect(elite.id)}
                        />
                      ) : (
                        <span className="cell empty" title={`${where}: empty`} />
                      )}
                    </td>
                  )
                })}
              </tr>
            ))}
          </tbody>
        ))}
      </table>
      <p className="muted">
        Rows: size bins (small to field-wide). Columns: elongation bins, each split into annularity and then standing bins
        (docs/discovery.md).
      </p>
    </figure>
  )
}

// The archive as a map (docs/discovery.md): a material's registered primitives placed in the MAP-Elites
// grid (class x size x elongation x annularity x standing), each cell coloured by its elite's fitness;
// click a cell for its elite. Per class, rows are size bins; columns nest elongation, then annularity,
// then standing.
import { useEffect, useMemo, useState } from 'react'
import { get } from '../api'
import { CLASS_NAMES, CLASS_TOKENS, type ClassToken } from '../../engine/contracts/registry'
import { ARCHIVE_CELLS, binsOf, cellKey, cellOf, descriptorsOf } from '../../engine/discovery/archive'

interface Placed {
  id: string
  class: ClassToken
  material: string
  persistence: number
  noise_tolerance: number
  metrics: Record<string, number>
}

const [SIZES, ELONGATIONS, ANNULARITIES, STANDINGS] = [binsOf('size'), binsOf('elongation'), binsOf('annularity'), binsOf('standing')]
/** The columns of a class's rows: elongation, annularity, standing, nested in that order. */
const COLUMNS = ELONGATIONS * ANNULARITIES * STANDINGS
const columnOf = (k: number) => ({
  elongation: Math.floor(k / (ANNULARITIES * STANDINGS)),
  annularity: Math.floor(k / STANDINGS) % ANNULARITIES,
  standing: k % STANDINGS,
})
const DESCRIPTORS = ['area', 'elongation', 'annularity', 'standing', 'fitness'] as const
/** Primitives registered before the archive existed lack some descriptors in their metrics and cannot be placed. */
const placeable = (p: Placed): p is Placed & { metrics: Record<(typeof DESCRIPTORS)[number], number> } =>
  DESCRIPTORS.every((d) => typeof p.metrics[d] === 'number')
/** Dark blue (low fitness) to amber (high). */
const colour = (f: number) => `hsl(${220 - 180 * f}, 70%, ${25 + 30 * f}%)`

export function ArchiveMap({ material, onSelect }: { material: string; onSelect: (id: string) => void }) {
  const [items, setItems] = useState<Placed[]>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    if (!material) return
    get<{ items: Placed[] }>(`/primitives?material=${encodeURIComponent(material)}&limit=500`).then(
      (d) => (setItems(d.items), setError(undefined)),
      (e: Error) => setError(e.message),
    )
  }, [material])
  // each cell's elite: the fittest primitive placed there
  const elites = useMemo(() => {
    const cells = new Map<string, Placed>()
    for (const p of items.filter(placeable)) {
      const key = cellKey(cellOf(descriptorsOf({ class: p.class, features: p.metrics })))
      const held = cells.get(key)
      if (!held || held.metrics.fitness < p.metrics.fitness) cells.set(key, p)
    }
    return cells
  }, [items])
  if (!material) return <p className="muted">Choose a material (filter above) to see its archive map.</p>
  if (error) return <p role="alert">{error}</p>
  const qd = [...elites.values()].reduce((s, p) => s + p.metrics.fitness, 0)
  return (
    <figure className="archive-map" data-testid="archive-map">
      <figcaption>
        registered archive of {material}: {elites.size} of {ARCHIVE_CELLS} cells ({((100 * elites.size) / ARCHIVE_CELLS).toFixed(1)}%),
        QD-score {qd.toFixed(2)} over {items.filter(placeable).length} registered primitives
        {items.length > items.filter(placeable).length
          ? ` · ${items.length - items.filter(placeable).length} older primitives without descriptors not shown`
          : ''}
        <span className="muted" data-testid="archive-note">
          {' '}
          · This map holds every registered primitive of {material}, from all runs, the fittest per cell. An evolve's QD-score is its own
          search's archive: it counts elites that novelty turned away as duplicates of primitives already held, and not the primitives of
          earlier runs, so the two differ.
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
                  const elite = elites.get(cellKey(cell))
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

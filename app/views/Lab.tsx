// The rest of the instrument: the field's conditions (material, temperature, noise), EVOLVE with live
// progress from the feed, and a .crystal editor that runs a program and shows its trace.
import { useEffect, useState } from 'react'
import type { Static } from '@sinclair/typebox'
import type { GenerationReport, Job, MaterialsReply, ProgramError } from '../../engine/contracts/api.js'
import { ApiError, get, post } from '../api'
import { useStore } from '../store'
import { ErrorLine, useAction } from './Controls'

type Material = Static<typeof MaterialsReply>[number]

const EXAMPLE = `# a small experiment (docs/language.md): cold europium holds a text for a few hundred steps
MATERIAL europium_crystal
WRITE "the cold glyph remembers"
RESONATE 200
PROBE "the cold glyph remembers"
PROBE "a warm river of stones"
`

/** The QD curve of an evolve: per generation its best and mean fitness, the archive's QD-score and coverage. */
function Generations({ history }: { history: GenerationReport[] }) {
  return (
    <table className="generations" data-testid="evolve-history">
      <thead>
        <tr>
          <th title="generation">gen.</th>
          <th title="best fitness of the generation">best</th>
          <th title="mean fitness of the generation">mean</th>
          <th title="QD-score: sum of the archive's elites' fitness">QD</th>
          <th title="coverage: share of the archive's cells filled">cover</th>
        </tr>
      </thead>
      <tbody>
        {history.map((g) => (
          <tr key={g.generation}>
            <td>{g.generation}</td>
            <td>{g.best_fitness.toFixed(3)}</td>
            <td>{g.mean_fitness.toFixed(3)}</td>
            <td>{g.qd_score.toFixed(2)}</td>
            <td>{(100 * g.coverage).toFixed(1)}%</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function Lab() {
  const [materials, setMaterials] = useState<Material[]>([])
  const state = useStore((s) => s.state)
  const jobs = useStore((s) => s.jobs)
  const driver = useStore((s) => s.driver)
  const setJob = useStore((s) => s.setJob)
  const conditions = useAction('conditions')
  const evolve = useAction('evolve')
  const run = useAction('run')
  const [material, setMaterial] = useState('')
  const [temperature, setTemperature] = useState('')
  const [noise, setNoise] = useState('0')
  const [search, setSearch] = useState({ material: 'europium_crystal', generations: '3', population: '8', size: '48' })
  const [jobId, setJobId] = useState<string>()
  const [program, setProgram] = useState(EXAMPLE)
  const [trace, setTrace] = useState<string[]>([])
  const [programErrors, setProgramErrors] = useState<ProgramError[]>([])

  useEffect(() => {
    get<Material[]>('/materials').then(setMaterials, () => setMaterials([]))
  }, [])
  useEffect(() => {
    if (state && !material) {
      setMaterial(state.material)
      setTemperature(String(state.temperature_k))
    }
  }, [state, material])

  const job: Job | undefined = jobId ? jobs[jobId] : undefined
  const p = job?.progress

  return (
    <div className="controls lab">
      <form aria-describedby="conditions-error" onSubmit={(e) => (e.preventDefault(), conditions.run(() => driver.conditions({ material, temperature_k: Number(temperature), noise: Number(noise) })))}>
        <h3>Conditions</h3>
        <label>
          material{' '}
          <select name="material" value={material} onChange={(e) => setMaterial(e.target.value)}>
            {materials.map((m) => (
              <option key={m.name}>{m.name}</option>
            ))}
          </select>
        </label>
        <label>
          temperature (K) <input name="temperature" value={temperature} onChange={(e) => setTemperature(e.target.value)} inputMode="decimal" size={6} />
        </label>
        <label>
          noise <input name="noise" value={noise} onChange={(e) => setNoise(e.target.value)} inputMode="decimal" size={6} />
        </label>
        <button disabled={conditions.busy}>Apply</button>
        <ErrorLine id="conditions-error" error={conditions.error} />
      </form>

      <form aria-describedby="evolve-error" onSubmit={(e) => (e.preventDefault(), evolve.run(async () => setJobId(await driver.evolve({ material: search.material, generations: Number(search.generations), population: Number(search.population), size: Number(search.size) }, setJob))))}>
        <h3>Evolve</h3>
        <label>
          material{' '}
          <select name="evolve-material" value={search.material} onChange={(e) => setSearch({ ...search, material: e.target.value })}>
            {materials.map((m) => (
              <option key={m.name}>{m.name}</option>
            ))}
          </select>
        </label>
        {(['generations', 'population', 'size'] as const).map((k) => (
          <label key={k}>
            {k} <input name={`evolve-${k}`} value={search[k]} onChange={(e) => setSearch({ ...search, [k]: e.target.value })} inputMode="numeric" size={5} />
          </label>
        ))}
        <button disabled={evolve.busy || job?.status === 'running'}>Evolve</button>
        <ErrorLine id="evolve-error" error={evolve.error ?? job?.error ?? undefined} />
        {job && p && (
          <div className="job" data-testid="evolve-progress">
            <progress max={p.generations} value={p.generation} aria-label="generations done" />
            <p>
              {job.status === 'running' ? `generation ${p.generation} of ${p.generations}` : job.status}
              {` · best fitness ${p.best_fitness.toFixed(3)} · registered ${p.registered_total} · QD-score ${p.qd_score.toFixed(2)} · coverage ${(100 * p.coverage).toFixed(1)}% (${p.elites} cells)`}
            </p>
            {job.history.length > 0 && <Generations history={job.history} />}
            {job.status === 'done' && <p data-testid="evolve-registered">{job.registered.length ? job.registered.join(' ') : 'nothing new'}</p>}
          </div>
        )}
      </form>

      <form
        aria-describedby="run-error"
        onSubmit={(e) => (
          e.preventDefault(),
          run.run(async () => {
            setProgramErrors([])
            setTrace([])
            try {
              const r = await post<{ trace: { line: number; text: string }[] }>('/crystal/run', { program })
              setTrace(r.trace.map((t) => `${t.line}  ${t.text}`))
            } catch (err) {
              if (err instanceof ApiError) setProgramErrors(err.errors)
              throw err
            }
          })
        )}
      >
        <h3>Program <span className="muted">(runs on the server, in its own field)</span></h3>
        <textarea name="program" aria-label="program" value={program} onChange={(e) => setProgram(e.target.value)} rows={8} spellCheck={false} />
        <button disabled={run.busy}>Run</button>
        <ErrorLine id="run-error" error={run.error} />
        {programErrors.length > 0 && (
          <ul className="error" data-testid="program-errors">
            {programErrors.map((e) => (
              <li key={`${e.line}:${e.column}`}>{`line ${e.line}, column ${e.column}: ${e.message}${e.hint ? ` (${e.hint})` : ''}`}</li>
            ))}
          </ul>
        )}
        {trace.length > 0 && <pre data-testid="program-trace">{trace.join('\n')}</pre>}
      </form>
    </div>
  )
}

// The rest of the instrument: the field's conditions (material, temperature, noise), EVOLVE with live
// progress from the feed, and a .crystal editor that runs a program and shows its trace.
import { Fragment, useEffect, useState } from 'react'
import type { Static } from '@sinclair/typebox'
import type { Job, MaterialsReply, ProgramError } from '../../engine/contracts/api.js'
import { archivesInWords } from '../../engine/discovery/archive.js'
import { ApiError, get, post } from '../api'
import { useStore } from '../store'
import { ErrorLine, useAction } from './Controls'
import { GenerationCharts, KEPT_RUNS } from './GenerationCharts'

type Material = Static<typeof MaterialsReply>[number]

const EXAMPLE = `# a small experiment (docs/language.md): cold europium holds a text for a few hundred steps
MATERIAL europium_crystal
WRITE "the cold glyph remembers"
RESONATE 200
PROBE "the cold glyph remembers"
PROBE "a warm river of stones"
`

const runName = (j: Job, i: number) =>
  `run ${i + 1}: ${j.request.material} ${j.request.generations}×${j.request.population ?? ''} N=${j.request.size ?? ''}`

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
  // the runs started from this page, kept to compare their QD curves
  const [runIds, setRunIds] = useState<string[]>([])
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

  const started = (id: string) => {
    setJobId(id)
    setRunIds((ids) => [...ids.filter((x) => x !== id), id].slice(-KEPT_RUNS))
  }
  const job: Job | undefined = jobId ? jobs[jobId] : undefined
  const p = job?.progress
  const runs = runIds.map((id) => jobs[id]).filter((j): j is Job => j !== undefined)

  return (
    <div className="controls lab">
      <form
        aria-describedby="conditions-error"
        onSubmit={(e) => (
          e.preventDefault(),
          conditions.run(() => driver.conditions({ material, temperature_k: Number(temperature), noise: Number(noise) }))
        )}
      >
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
          temperature (K){' '}
          <input name="temperature" value={temperature} onChange={(e) => setTemperature(e.target.value)} inputMode="decimal" size={6} />
        </label>
        <label>
          noise <input name="noise" value={noise} onChange={(e) => setNoise(e.target.value)} inputMode="decimal" size={6} />
        </label>
        <button disabled={conditions.busy}>Apply</button>
        <ErrorLine id="conditions-error" error={conditions.error} />
      </form>

      <form
        aria-describedby="evolve-error"
        onSubmit={(e) => (
          e.preventDefault(),
          evolve.run(async () =>
            started(
              await driver.evolve(
                {
                  material: search.material,
                  generations: Number(search.generations),
                  population: Number(search.population),
                  size: Number(search.size),
                },
                setJob,
              ),
            ),
          )
        )}
      >
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
            {k}{' '}
            <input
              name={`evolve-${k}`}
              value={search[k]}
              onChange={(e) => setSearch({ ...search, [k]: e.target.value })}
              inputMode="numeric"
              size={5}
            />
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
            {job.history.length > 0 && (
              <GenerationCharts
                testId="evolve"
                unit="run"
                current={job.id}
                runs={runs.map((r, i) => ({ key: r.id, label: runName(r, i), history: r.history }))}
              />
            )}
            {job.status === 'done' && (
              <>
                <p data-testid="evolve-registered">
                  {job.registered.length
                    ? job.registered.map((id, i) => (
                        <Fragment key={id}>
                          {i > 0 && ' '}
                          <span className="nowrap">{id}</span>
                        </Fragment>
                      ))
                    : 'nothing new'}
                </p>
                <p data-testid="evolve-archives">{archivesInWords(p, job.registered_archive)}</p>
                <p className="muted" data-testid="evolve-note">
                  {`The search archive is this run's own elites, including those novelty turned away as duplicates of primitives already held (registered: ${job.registered.length}). The registered archive is every registered primitive of ${job.request.material}, from all runs, the fittest per cell: the figure its archive map (Primitives) shows.`}
                </p>
              </>
            )}
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
        <h3>
          Program <span className="muted">(runs on the server, in its own field)</span>
        </h3>
        <textarea
          name="program"
          aria-label="program"
          value={program}
          onChange={(e) => setProgram(e.target.value)}
          rows={8}
          spellCheck={false}
        />
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

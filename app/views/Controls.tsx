// The controls that change the field: WRITE, PULSE (placed by clicking the field), RESONATE (played
// chunk by chunk, with its progress and a Stop) and DREAM. Each shows its own error, in words, next to it.
import { useRef, useState } from 'react'
import { PULSE_FIELDS, pulseNumbers, useStore, type Control } from '../store'

export function useAction(control: Control) {
  const setError = useStore((s) => s.setError)
  const error = useStore((s) => s.errors[control])
  const [busy, setBusy] = useState(false)
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true)
    setError(control, undefined)
    try {
      await work()
    } catch (e) {
      setError(control, (e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return { run, busy, error }
}

export function ErrorLine({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p className="error" role="alert" id={id}>
      {error}
    </p>
  ) : null
}

export function Controls() {
  const driver = useStore((s) => s.driver)
  const write = useAction('write')
  const resonate = useAction('resonate')
  const dream = useAction('dream')
  const pulseError = useStore((s) => s.errors.pulse)
  const setError = useStore((s) => s.setError)
  const place = (p: Parameters<typeof driver.pulse>[0]) => {
    setError('pulse', undefined)
    driver.pulse(p).catch((e: Error) => setError('pulse', e.message))
  }
  const pulse = useStore((s) => s.pulse)
  const setPulse = useStore((s) => s.setPulse)
  const report = useStore((s) => s.dream)
  const setDream = useStore((s) => s.setDream)
  const [text, setText] = useState('the cold glyph remembers')
  const [importance, setImportance] = useState('1')
  const [steps, setSteps] = useState('200')
  const [played, setPlayed] = useState<{ done: number; total: number; stopped?: boolean }>()
  const stop = useRef<AbortController>(undefined)
  const play = () =>
    resonate.run(async () => {
      const total = Number(steps)
      const controller = (stop.current = new AbortController())
      setPlayed({ done: 0, total })
      const done = await driver.step(total, { signal: controller.signal, onProgress: (d) => setPlayed({ done: d, total }) })
      setPlayed({ done, total, stopped: done < total })
    })

  return (
    <div className="controls">
      <form onSubmit={(e) => (e.preventDefault(), write.run(() => driver.write(text, Number(importance))))} aria-describedby="write-error">
        <h3>Write</h3>
        <label>
          text <input value={text} onChange={(e) => setText(e.target.value)} name="text" />
        </label>
        <label>
          importance{' '}
          <input value={importance} onChange={(e) => setImportance(e.target.value)} name="importance" inputMode="decimal" size={5} />
        </label>
        <button disabled={write.busy}>Write</button>
        <ErrorLine id="write-error" error={write.error} />
      </form>

      <form aria-describedby="pulse-error" onSubmit={(e) => (e.preventDefault(), place(pulseNumbers(pulse)))}>
        <h3>
          Pulse <span className="muted">(or click the field)</span>
        </h3>
        {PULSE_FIELDS.map((k) => (
          <label key={k}>
            {k}{' '}
            <input name={`pulse-${k}`} value={pulse[k]} size={5} inputMode="decimal" onChange={(e) => setPulse({ [k]: e.target.value })} />
          </label>
        ))}
        <button>Pulse</button>
        <ErrorLine id="pulse-error" error={pulseError} />
      </form>

      <form onSubmit={(e) => (e.preventDefault(), play())} aria-describedby="resonate-error">
        <h3>Resonate</h3>
        <label>
          steps <input value={steps} onChange={(e) => setSteps(e.target.value)} name="steps" inputMode="numeric" size={7} />
        </label>
        <button disabled={resonate.busy}>Resonate</button>
        <button type="button" disabled={!resonate.busy} onClick={() => stop.current?.abort()}>
          Stop
        </button>
        {played && played.total > 0 && (
          <div className="job" data-testid="resonate-progress">
            <progress max={played.total} value={played.done} aria-label="resonate progress" />
            <p className="muted">{`${played.done} of ${played.total} steps${played.stopped ? ' · stopped' : resonate.busy ? '' : ' · done'}`}</p>
          </div>
        )}
        <ErrorLine id="resonate-error" error={resonate.error} />
      </form>

      <div className="dream" aria-describedby="dream-error">
        <h3>Dream</h3>
        {(['light', 'deep'] as const).map((mode) => (
          <button key={mode} disabled={dream.busy} onClick={() => dream.run(async () => setDream(await driver.dream(mode)))}>
            Dream {mode}
          </button>
        ))}
        <ErrorLine id="dream-error" error={dream.error} />
        {report && (
          <dl className="report" data-testid="dream-report">
            <dt>mode</dt>
            <dd>{report.mode}</dd>
            <dt>energy</dt>
            <dd>
              {report.energy_before.toPrecision(4)} → {report.energy_after.toPrecision(4)}
            </dd>
            <dt>pruned</dt>
            <dd>{(100 * report.pruned_fraction).toFixed(0)}%</dd>
            <dt>amplified</dt>
            <dd>{(100 * report.amplified_fraction).toFixed(0)}%</dd>
            <dt>kicks</dt>
            <dd>{report.mutated_cells}</dd>
          </dl>
        )}
      </div>
    </div>
  )
}

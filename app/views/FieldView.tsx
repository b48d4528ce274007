// The live field as a colour-mapped height map (three.js): one vertex per cell of the downsampled
// field, height and colour from u on one scale, shown in a legend. The scale is absolute by default
// (±A held fixed, so that decay and a dream's cut show as the field fading), or each frame's own peak.
// Drag to orbit, wheel to zoom, arrow keys to pan; a click (without a drag) places a pulse at that point,
// Enter one where the centre of the view falls on the field.
import { useEffect, useRef, useState } from 'react'
import * as THREE from 'three'
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js'
import type { State } from '../../engine/contracts/api.js'
import { roundUp } from '../chart'

/** A diverging colour map on [-1, 1]: blue for troughs, dark at rest, amber for crests. */
export function colour(v: number): [number, number, number] {
  const t = Math.max(-1, Math.min(1, v))
  return t >= 0 ? [0.08 + 0.92 * t, 0.08 + 0.62 * t, 0.12 + 0.1 * t] : [0.08 + 0.1 * -t, 0.08 + 0.45 * -t, 0.12 + 0.88 * -t]
}

const css = ([r, g, b]: [number, number, number]) => `rgb(${Math.round(255 * r)}, ${Math.round(255 * g)}, ${Math.round(255 * b)})`
const GRADIENT = `linear-gradient(to right, ${Array.from({ length: 9 }, (_, i) => css(colour(i / 4 - 1))).join(', ')})`

export const peakOf = (field: readonly number[]) => field.reduce((m, v) => Math.max(m, Math.abs(v)), 0)

/** Height of a crest at the top of the scale, in units of the field's side. */
const RELIEF = 0.12
/** A press that moves further than this (pixels) is an orbit, not a click. */
const CLICK_SLOP = 4

export type ScaleMode = 'absolute' | 'frame'

export function FieldView({ state, onPick }: { state: State | undefined; onPick: (x: number, y: number) => void }) {
  const host = useRef<HTMLDivElement>(null)
  const scene = useRef<
    | {
        renderer: THREE.WebGLRenderer
        mesh: THREE.Mesh<THREE.PlaneGeometry, THREE.MeshBasicMaterial>
        camera: THREE.PerspectiveCamera
        world: THREE.Scene
        side: number
        draw: () => void
        orbit: OrbitControls
      }
    | undefined
  >(undefined)
  const pressed = useRef<{ x: number; y: number } | undefined>(undefined)
  const [mode, setMode] = useState<ScaleMode>('absolute')
  // the absolute scale's A: set once from the first frame that holds anything, then kept until changed
  const [absolute, setAbsolute] = useState<number | undefined>()
  const [typed, setTyped] = useState('')
  const peak = state ? peakOf(state.field) : 0
  if (absolute === undefined && peak > 0) {
    setAbsolute(roundUp(peak))
    setTyped(String(roundUp(peak)))
  }
  const scale = mode === 'frame' ? peak || 1 : (absolute ?? 1)

  useEffect(() => {
    const el = host.current!
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true })
    el.appendChild(renderer.domElement)
    const world = new THREE.Scene()
    world.background = new THREE.Color(0x0b0d12)
    const camera = new THREE.PerspectiveCamera(40, 1, 0.1, 20)
    camera.position.set(0, -1.45, 1.25)
    const orbit = new OrbitControls(camera, renderer.domElement)
    orbit.minDistance = 0.4
    orbit.maxDistance = 6
    orbit.saveState() // the view Reset view returns to
    orbit.listenToKeyEvents(el) // the arrow keys pan while the view has the focus
    const mesh = new THREE.Mesh(
      new THREE.PlaneGeometry(1, 1, 1, 1),
      new THREE.MeshBasicMaterial({ vertexColors: true, side: THREE.DoubleSide }),
    )
    world.add(mesh)
    const draw = () => renderer.render(world, camera)
    orbit.addEventListener('change', draw)
    // the canvas follows its box (which follows the window), so it never covers the controls
    const resize = () => {
      const w = Math.max(1, el.clientWidth)
      const h = Math.max(1, el.clientHeight)
      renderer.setSize(w, h, false)
      camera.aspect = w / h
      camera.updateProjectionMatrix()
      draw()
    }
    const watch = new ResizeObserver(resize)
    watch.observe(el)
    resize()
    scene.current = { renderer, mesh, camera, world, side: 0, draw, orbit }
    return () => {
      watch.disconnect()
      orbit.dispose()
      renderer.dispose()
      el.removeChild(renderer.domElement)
    }
  }, [])

  useEffect(() => {
    const s = scene.current
    if (!s || !state) return
    const side = state.size
    if (s.side !== side) {
      s.mesh.geometry.dispose()
      s.mesh.geometry = new THREE.PlaneGeometry(1, 1, side - 1, side - 1)
      s.mesh.geometry.setAttribute('color', new THREE.Float32BufferAttribute(new Float32Array(side * side * 3), 3))
      s.side = side
    }
    const pos = s.mesh.geometry.attributes.position as THREE.BufferAttribute
    const col = s.mesh.geometry.attributes.color as THREE.BufferAttribute
    // the colour map is in sRGB, as the legend's CSS gradient is; three.js keeps colours linear
    const c = new THREE.Color()
    // PlaneGeometry's vertices run row by row from the top (y = +0.5): the field's row order
    for (let i = 0; i < side * side; i++) {
      const v = Math.max(-1, Math.min(1, state.field[i] / scale))
      pos.setZ(i, RELIEF * v)
      c.setRGB(...colour(v), THREE.SRGBColorSpace)
      col.setXYZ(i, c.r, c.g, c.b)
    }
    pos.needsUpdate = true
    col.needsUpdate = true
    s.draw()
  }, [state, scale])

  /** Places a pulse where a point of the view (in normalized device coordinates) falls on the field, if it does. */
  const pickAt = (ndc: THREE.Vector2) => {
    const s = scene.current
    if (!s) return
    const ray = new THREE.Raycaster()
    ray.setFromCamera(ndc, s.camera)
    const hit = ray.intersectObject(s.mesh)[0]
    if (hit?.uv) onPick(Math.min(1, Math.max(0, hit.uv.x)), Math.min(1, Math.max(0, 1 - hit.uv.y)))
  }
  const pick = (e: React.MouseEvent<HTMLDivElement>) => {
    const from = pressed.current
    if (from && Math.hypot(e.clientX - from.x, e.clientY - from.y) > CLICK_SLOP) return
    const rect = e.currentTarget.getBoundingClientRect()
    pickAt(new THREE.Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1))
  }

  const clipped = mode === 'absolute' && peak > scale
  return (
    <div className="field-view">
      <div
        ref={host}
        className="field"
        data-testid="field"
        // a widget that takes its own keys (WAI-ARIA's application role), so it must take the focus to get them
        role="application"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: an application region is operated from the keyboard once focused
        tabIndex={0}
        aria-label="the field in 3D: drag to orbit, wheel to zoom, arrow keys to pan; click, or Enter for the centre of the view, to place a pulse"
        onPointerDown={(e) => (pressed.current = { x: e.clientX, y: e.clientY })}
        onClick={pick}
        onKeyDown={(e) => e.key === 'Enter' && pickAt(new THREE.Vector2(0, 0))}
        title="drag to orbit, wheel to zoom, arrow keys to pan; click, or Enter, to place a pulse"
      />
      <div className="field-legend" data-testid="field-legend">
        <span className="scale-end">{(-scale).toPrecision(3)}</span>
        <span className="colour-bar" style={{ background: GRADIENT }} aria-hidden="true" />
        <span className="scale-end">+{scale.toPrecision(3)}</span>
        <span className="muted" data-testid="field-scale">
          {`u, colour and height · ${mode === 'absolute' ? 'absolute scale' : "this frame's peak"} · peak now ${peak.toPrecision(3)}`}
          {clipped ? ' (clipped at the scale)' : ''}
        </span>
        <label className="muted">
          scale{' '}
          <select name="field-scale" value={mode} onChange={(e) => setMode(e.target.value as ScaleMode)}>
            <option value="absolute">absolute ±A</option>
            <option value="frame">per frame</option>
          </select>
        </label>
        {mode === 'absolute' && (
          <>
            <label className="muted">
              A{' '}
              <input
                name="field-a"
                value={typed}
                onChange={(e) => (setTyped(e.target.value), Number(e.target.value) > 0 && setAbsolute(Number(e.target.value)))}
                inputMode="decimal"
                size={6}
                aria-invalid={!(Number(typed) > 0)}
              />
            </label>
            <button
              type="button"
              onClick={() => peak > 0 && (setAbsolute(roundUp(peak)), setTyped(String(roundUp(peak))))}
              title="set A to this frame's peak, rounded up"
            >
              Fit
            </button>
          </>
        )}
        <span className="muted hint">drag to orbit · wheel to zoom · click to pulse</span>
        <button type="button" onClick={() => scene.current?.orbit.reset()}>
          Reset view
        </button>
      </div>
    </div>
  )
}

// The live field as a colour-mapped height map (three.js): one vertex per cell of the downsampled
// field, height and colour from u. Clicking places a pulse at that point (normalized coordinates).
import { useEffect, useRef } from 'react'
import * as THREE from 'three'
import type { State } from '../../engine/contracts/api.js'

/** A diverging colour map: blue for troughs, dark at rest, amber for crests. */
function colour(v: number, out: THREE.Color): THREE.Color {
  const t = Math.max(-1, Math.min(1, v))
  return t >= 0 ? out.setRGB(0.08 + 0.92 * t, 0.08 + 0.62 * t, 0.12 + 0.1 * t) : out.setRGB(0.08 + 0.1 * -t, 0.08 + 0.45 * -t, 0.12 + 0.88 * -t)
}

export function FieldView({ state, onPick }: { state: State | undefined; onPick: (x: number, y: number) => void }) {
  const host = useRef<HTMLDivElement>(null)
  const scene = useRef<{ renderer: THREE.WebGLRenderer; mesh: THREE.Mesh<THREE.PlaneGeometry, THREE.MeshBasicMaterial>; camera: THREE.PerspectiveCamera; world: THREE.Scene; side: number } | undefined>(undefined)

  useEffect(() => {
    const el = host.current!
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true })
    renderer.setSize(el.clientWidth, el.clientHeight)
    el.appendChild(renderer.domElement)
    const world = new THREE.Scene()
    world.background = new THREE.Color(0x0b0d12)
    const camera = new THREE.PerspectiveCamera(40, el.clientWidth / el.clientHeight, 0.1, 10)
    camera.position.set(0, -1.45, 1.25)
    camera.lookAt(0, 0, 0)
    const mesh = new THREE.Mesh(new THREE.PlaneGeometry(1, 1, 1, 1), new THREE.MeshBasicMaterial({ vertexColors: true, side: THREE.DoubleSide }))
    world.add(mesh)
    scene.current = { renderer, mesh, camera, world, side: 0 }
    renderer.render(world, camera)
    return () => {
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
    const peak = state.field.reduce((m, v) => Math.max(m, Math.abs(v)), 1e-6)
    const pos = s.mesh.geometry.attributes.position as THREE.BufferAttribute
    const col = s.mesh.geometry.attributes.color as THREE.BufferAttribute
    const c = new THREE.Color()
    // PlaneGeometry's vertices run row by row from the top (y = +0.5): the field's row order
    for (let i = 0; i < side * side; i++) {
      const v = state.field[i] / peak
      pos.setZ(i, 0.12 * v)
      colour(v, c)
      col.setXYZ(i, c.r, c.g, c.b)
    }
    pos.needsUpdate = true
    col.needsUpdate = true
    s.renderer.render(s.world, s.camera)
  }, [state])

  const pick = (e: React.MouseEvent<HTMLDivElement>) => {
    const s = scene.current
    if (!s) return
    const rect = e.currentTarget.getBoundingClientRect()
    const ndc = new THREE.Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1)
    const ray = new THREE.Raycaster()
    ray.setFromCamera(ndc, s.camera)
    const hit = ray.intersectObject(s.mesh)[0]
    if (hit?.uv) onPick(Math.min(1, Math.max(0, hit.uv.x)), Math.min(1, Math.max(0, 1 - hit.uv.y)))
  }

  return <div ref={host} className="field" data-testid="field" onClick={pick} title="click to place a pulse" />
}

// Builds the Fastify instance: errors as problem+json, the OpenAPI document (/openapi.json) and its
// docs page (/docs), bearer auth on mutating routes, optional CORS, then one plugin per domain.
// Later domains (station, markets, swarm) register here the same way.
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import fastifyStatic from '@fastify/static'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { API_LIMITS } from '../engine/contracts/api.js'
import { CrystalError } from '../engine/errors.js'
import { loadCatalog } from '../engine/field/materials.node.js'
import type { BackendChoice } from '../engine/field/select.js'
import { createNodeEngine } from '../engine/node.js'
import type { Engine } from '../engine/field/engine.js'
import { FileRegistryStore } from '../engine/registry/file_store.node.js'
import { limitsFromEnv, Registry } from '../engine/registry/registry.js'
import pkg from '../package.json' with { type: 'json' }
import { crystalRoutes } from './crystal/routes.js'
import { CrystalService } from './crystal/service.js'
import { problem, registerErrors } from './errors.js'
import { ContractBus } from '../engine/bus/contract_bus.js'
import { connectBus, natsConnection, nodeId } from '../engine/bus/nats.node.js'
import { ConsciousnessPublisher, DEFAULT_PERIOD_MS } from './consciousness/publisher.js'
import { registryRoutes } from './registry/routes.js'
import { swarmRoutes } from './swarm/routes.js'
import { stationRoutes } from './station/routes.js'
import { openStation, type StationConfig } from './station/station.js'

export interface ServerOptions {
  host: string
  port: number
  dataDir: string
  backend: BackendChoice
  size: number
  material: string
  seed: number
  /** Required for a non-loopback host; when set, every mutating route needs `Authorization: Bearer <token>`. */
  token?: string
  /** Origins allowed by CORS (off when empty). */
  cors?: string[]
  logLevel?: string
  materialFiles?: string[]
  /** Told once which backend runs. */
  report?: (line: string) => void
  /** The station (DESIGN.md section 12): on air at /stream when given. */
  station?: StationConfig
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export async function buildServer(o: ServerOptions): Promise<{ app: FastifyInstance; service: CrystalService }> {
  if (!isLoopback(o.host) && !o.token) {
    throw new CrystalError('bad_argument', `binding ${o.host} (not loopback) needs SVC_CRYSTAL_API_TOKEN: every mutating request must then carry it as a bearer token`, { field: 'host' })
  }
  const catalog = loadCatalog(o.dataDir, o.materialFiles)
  // one store for the server's life, so that its cache of the verified file is kept between requests
  const store = new FileRegistryStore(o.dataDir)
  const limits = limitsFromEnv(process.env)
  const registry = () => new Registry(store, limits)
  const engine = await createNodeEngine({ backend: o.backend, size: o.size, material: catalog.get(o.material), seed: o.seed, report: o.report })
  const service = await CrystalService.start({ engine, dataDir: o.dataDir, backend: engine.backend })
  const publisher = await startPublisher(engine, o.report ?? (() => {}))
  const station = o.station ? await openStation(o.station, o.report ?? (() => {}), publisher?.bus) : undefined

  const app = Fastify({
    bodyLimit: API_LIMITS.body_bytes,
    logger: o.logLevel ? { level: o.logLevel } : false,
    // unknown fields are refused, not silently dropped
    ajv: { customOptions: { removeAdditional: false } },
  })
  registerErrors(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Resonant Crystal', version: pkg.version, description: 'The crystal service: one resonant field, its registry of primitives, and the work around them.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: o.token ? [{ bearer: [] }] : [],
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  if (o.token) {
    const expected = Buffer.from(`Bearer ${o.token}`)
    app.addHook('onRequest', async (req, reply) => {
      if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return
      const given = Buffer.from(req.headers.authorization ?? '')
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return problem(reply, 401, 'this route needs Authorization: Bearer <SVC_CRYSTAL_API_TOKEN>', { code: 'unauthorized' })
    })
  }
  if (o.cors?.length) await app.register(cors, { origin: o.cors })

  await app.register(crystalRoutes, { service, catalog, registry, open: (x) => createNodeEngine({ backend: o.backend, ...x }), publisher: publisher?.publisher })
  await app.register(registryRoutes, { catalog, registry })
  await app.register(swarmRoutes)
  if (station) await app.register(stationRoutes, { station })
  // the Observatory, built by `npm run build` (vite) into dist/app, beside dist/server
  const observatory = fileURLToPath(new URL('../app/', import.meta.url))
  if (existsSync(observatory)) {
    await app.register(fastifyStatic, {
      root: observatory,
      prefix: '/',
      index: 'index.html',
      wildcard: false,
      // cross-origin isolation: the tab's CPU engine runs WebAssembly on shared memory
      setHeaders: (res) => {
        res.setHeader('Cross-Origin-Opener-Policy', 'same-origin')
        res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp')
      },
    })
  }
  app.addHook('onClose', async () => {
    publisher?.publisher.stop()
    station?.stop()
    await publisher?.close()
    await service.close()
  })
  return { app, service }
}

/** Starts the server and closes it cleanly on SIGINT/SIGTERM (jobs cancelled, engine released). */
export async function serve(o: ServerOptions, say: (line: string) => void): Promise<void> {
  const { app } = await buildServer(o)
  const address = await app.listen({ host: o.host, port: o.port })
  say(`crystal service listening on ${address} (API docs at ${address}/docs)`)
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      say(`${signal}: closing (finishing requests, cancelling jobs, releasing the engine)`)
      app.close().then(resolve, resolve)
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
}

/** With SVC_NATS_URL set, publishes the consciousness subjects from the live field; without it, nothing. */
async function startPublisher(engine: Engine, say: (line: string) => void): Promise<{ publisher: ConsciousnessPublisher; bus: ContractBus; close: () => Promise<void> } | undefined> {
  if (!process.env.SVC_NATS_URL) return undefined
  let nc
  try {
    nc = await connectBus('publishing')
  } catch (e) {
    say(`warning: not publishing to the bus: ${(e as Error).message}`)
    return undefined
  }
  const period = Number(process.env.SVC_CONSCIOUSNESS_PERIOD_MS) || DEFAULT_PERIOD_MS
  const bus = new ContractBus(natsConnection(nc), nodeId(), say)
  const publisher = new ConsciousnessPublisher(engine, bus, period, say)
  publisher.start()
  say(`publishing the consciousness subjects to ${process.env.SVC_NATS_URL} every ${period} ms as ${bus.sender}`)
  return { publisher, bus, close: () => nc.drain().catch(() => nc.close()) }
}

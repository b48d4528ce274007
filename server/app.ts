// Builds the Fastify instance: errors as problem+json, the OpenAPI document (/openapi.json) and its
// docs page (/docs), bearer auth on mutating routes, optional CORS, then one plugin per domain.
import compress from '@fastify/compress'
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import fastifyStatic from '@fastify/static'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv, type Options as AjvOptions } from 'ajv'
import ajvFormats from 'ajv-formats'
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { timingSafeEqual } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Settings } from '../engine/config.js'
import { API_LIMITS } from '../engine/contracts/api.js'
import { CrystalError, type ErrorCode } from '../engine/errors.js'
import { loadCatalog } from '../engine/field/materials.node.js'
import { TransferTally } from '../engine/field/transfer_tally.js'
import type { BackendChoice } from '../engine/field/backend.js'
import { createNodeEngine } from '../engine/node.js'
import type { Engine } from '../engine/field/engine.js'
import { FileRegistryStore } from '../engine/registry/file_store.node.js'
import { Registry } from '../engine/registry/registry.js'
import pkg from '../package.json' with { type: 'json' }
import { crystalRoutes } from './crystal/routes.js'
import { CrystalService } from './crystal/service.js'
import { problem, registerErrors } from './errors.js'
import { ContractBus } from '../engine/bus/contract_bus.js'
import { connectBus, natsConnection, nodeId } from '../engine/bus/nats.node.js'
import { ConsciousnessPublisher, DEFAULT_PERIOD_MS } from '../engine/consciousness/publisher.js'
import { refuseDuplicateKeys } from './json_body.js'
import { marketRoutes } from './markets/routes.js'
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
  /**
   * From the environment, read by the edge that starts the server. With `settings.token` (required
   * for a non-loopback host) every mutating route needs `Authorization: Bearer <token>`.
   */
  settings: Settings
  /** Origins allowed by CORS (off when empty). */
  cors?: string[]
  logLevel?: string
  materialFiles?: string[]
  /** Told once which backend runs. */
  report?: (line: string) => void
  /** `crystal --debug serve`: each evolve job's and program's GPU transfers, a line a shape as it ends, and the field's as the server closes. */
  transfersTo?: (line: string) => void
  /** The station (DESIGN.md section 12): on air at /stream when given. */
  station?: StationConfig
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export async function buildServer(o: ServerOptions): Promise<{ app: FastifyInstance; service: CrystalService }> {
  const token = o.settings.token
  if (!isLoopback(o.host) && !token) {
    throw new CrystalError(
      'bad_argument',
      `binding ${o.host} (not loopback) needs SVC_CRYSTAL_API_TOKEN: every mutating request must then carry it as a bearer token`,
      { field: 'host' },
    )
  }
  const catalog = loadCatalog(o.dataDir, o.materialFiles)
  // one store for the server's life, so that its cache of the verified file is kept between requests
  const store = new FileRegistryStore(o.dataDir)
  const registry = () => new Registry(store, o.settings.registry_limits)
  const engine = await createNodeEngine({
    backend: o.backend,
    size: o.size,
    material: catalog.get(o.material),
    seed: o.seed,
    report: o.report,
    ...o.settings.engine,
  })
  // --debug: the field's transfers, written as the server closes (the workers' as each job ends)
  const tally = o.transfersTo && new TransferTally()
  tally?.track(engine)
  // on the GPU backend the first write, recall and dream find their kernels compiled (docs/gpu.md, "Compiling ahead")
  engine.compileAhead(['show', 'write', 'recall', 'dream', 'report'])
  const service = await CrystalService.start({
    engine,
    dataDir: o.dataDir,
    backend: engine.backend,
    registryLimits: o.settings.registry_limits,
    work: o.settings.work,
    engineSettings: o.settings.engine,
    transfersTo: o.transfersTo,
  })
  const publisher = await startPublisher(engine, o.settings, o.report ?? (() => {}))
  const station = o.station ? await openStation(o.station, o.report ?? (() => {}), publisher?.bus) : undefined

  const app = Fastify({
    bodyLimit: API_LIMITS.body_bytes,
    logger: o.logLevel ? { level: o.logLevel } : false,
    // a URL Fastify cannot decode (%E0%A4%A) is answered before any route or error handler: as problem+json too
    frameworkErrors: (error, _request, reply) => problem(reply, error.statusCode ?? 400, error.message, { code: 'bad_request' }),
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(validatorCompiler())
  refuseDuplicateKeys(app)
  registerErrors(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Resonant Crystal',
        version: pkg.version,
        description: 'The crystal service: one resonant field, its registry of primitives, and the work around them.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: token ? [{ bearer: [] }] : [],
    },
    transformObject: (doc) => problemsAsSent(('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject) as OpenApiPaths),
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  if (token) {
    const expected = Buffer.from(`Bearer ${token}`)
    app.addHook('onRequest', async (req, reply) => {
      if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return
      // the market routes carry their own bearer tokens (a trader's, the oracle's): docs/markets.md
      if (req.url.startsWith('/api/')) return
      const given = Buffer.from(req.headers.authorization ?? '')
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return problem(reply, 401, 'this route needs Authorization: Bearer <SVC_CRYSTAL_API_TOKEN>', { code: 'unauthorized' })
    })
  }
  if (o.cors?.length) await app.register(cors, { origin: o.cors })

  await app.register(crystalRoutes, { service, catalog, registry, publisher: publisher?.publisher })
  await app.register(registryRoutes, { catalog, registry })
  await app.register(swarmRoutes, { wsUrl: o.settings.bus.ws_url, announceFloor: o.settings.announce_floor })
  await app.register(marketRoutes, {
    dataDir: o.dataDir,
    settings: o.settings.markets,
    bus: o.settings.bus,
    apiToken: token,
    say: o.report,
  })
  if (station) await app.register(stationRoutes, { station, token })
  if (!station)
    app.get('/player', { schema: { hide: true } }, async (_req, reply) =>
      reply.code(404).type('text/html; charset=utf-8').send(NO_PLAYER_HTML),
    )
  // the Observatory, built by `npm run build` (vite) into dist/app, beside dist/server
  const observatory = fileURLToPath(new URL('../app/', import.meta.url))
  if (existsSync(observatory)) await app.register(observatoryAssets, { root: observatory })
  app.addHook('onClose', async () => {
    publisher?.publisher.stop()
    station?.stop()
    await publisher?.close()
    await service.close()
    for (const line of tally ? tally.lines() : []) o.transfersTo?.(`crystal: the server's field: ${line}`)
  })
  return { app, service }
}

/** What /player says when the server runs without a music library (DESIGN.md section 12). */
const NO_PLAYER_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Resonant Crystal - no station</title>
<style>body { font: 15px/1.5 system-ui, sans-serif; background: #0d1117; color: #e6edf3; max-width: 640px; margin: 0 auto; padding: 24px; } code { background: #161b22; padding: 1px 5px; border-radius: 3px; } a { color: #9cc3ff; }</style></head>
<body><h1>No station on this server</h1>
<p>The player plays the station, and this server was started without a music library.</p>
<p>Give it one, a folder laid out as <code>&lt;artist&gt;/&lt;album&gt;/*.mp3</code>, in any of these ways, then restart it:</p>
<ul><li><code>crystal serve --music ~/music</code></li><li><code>SVC_STATION_MUSIC=~/music crystal serve</code></li><li>a folder named <code>music</code> in the directory the server starts in</li></ul>
<p><a href="/">The Observatory</a> works without one.</p></body></html>
`

/**
 * The built Observatory, compressed (gzip or brotli as the browser asks) and cached: Vite names the
 * files under assets/ by their content hash, so they never change and are cached for a year; the
 * page itself is revalidated on every load, so a new build is picked up at once. Registered as its
 * own plugin so that compression applies to these files only, not to the live feed's event stream.
 */
const observatoryAssets: FastifyPluginAsync<{ root: string }> = async (app, { root }) => {
  await app.register(compress, { threshold: 1024 })
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: 'index.html',
    wildcard: false,
    cacheControl: false,
    setHeaders: (res, path) => {
      res.setHeader('Cache-Control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache')
      // cross-origin isolation: the tab's CPU engine runs WebAssembly on shared memory
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin')
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp')
    },
  })
}

/**
 * Validation without coercion for JSON bodies (`{"text": 42}` is refused, not written as "42"), with
 * coercion for the query and path, which arrive as text. Unknown fields are refused, not dropped.
 */
function validatorCompiler() {
  const common: AjvOptions = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false }
  // the formats (date-time, uri, ...) that Fastify's own validator knows, so that `format` checks
  const addFormats = ajvFormats.default
  const body = addFormats(new Ajv({ ...common, coerceTypes: false }))
  const text = addFormats(new Ajv({ ...common, coerceTypes: 'array' }))
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => (httpPart === 'body' ? body : text).compile(schema)
}

/** Starts the server and closes it cleanly on SIGINT/SIGTERM (jobs cancelled, engine released). */
export async function serve(o: ServerOptions, say: (line: string) => void): Promise<void> {
  const { app } = await buildServer(o)
  let address: string
  try {
    address = await app.listen({ host: o.host, port: o.port })
  } catch (e) {
    // the engine, the station and the jobs are let go, so that the process ends with its error
    await app.close()
    throw listenError(e, o)
  }
  say(
    `crystal service listening on ${address} (the Observatory at ${address}/${o.station ? `, the player at ${address}/player` : ''}, API docs at ${address}/docs)`,
  )
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      say(`${signal}: closing (finishing requests, cancelling jobs, releasing the engine)`)
      app.close().then(resolve, resolve)
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
}

/** Why the server could not listen, as the person who chose the address would put it. */
function listenError(e: unknown, o: Pick<ServerOptions, 'host' | 'port'>): unknown {
  const at = `${o.host}:${o.port}`
  const anAddress = 'give one of its addresses with --host, or 0.0.0.0 for all'
  const why: Record<string, [ErrorCode, string, 'host' | 'port', string]> = {
    EADDRINUSE: ['busy', `${at} is in use by another process`, 'port', 'stop what holds it, or choose another with --port'],
    EACCES: ['bad_argument', `listening on ${at} is not permitted`, 'port', 'ports below 1024 need privileges: choose another with --port'],
    EADDRNOTAVAIL: ['bad_argument', `${o.host} is not an address of this machine`, 'host', anAddress],
    ENOTFOUND: ['bad_argument', `the host name ${o.host} is not known`, 'host', anAddress],
  }
  const known = why[(e as NodeJS.ErrnoException).code ?? '']
  return known ? new CrystalError(known[0], known[1], { field: known[2] }, known[3]) : e
}

/** With a bus (SVC_NATS_URL), publishes the consciousness subjects from the live field; without it, nothing. */
async function startPublisher(
  engine: Engine,
  settings: Settings,
  say: (line: string) => void,
): Promise<{ publisher: ConsciousnessPublisher; bus: ContractBus; close: () => Promise<void> } | undefined> {
  if (!settings.bus.url) return undefined
  let nc: Awaited<ReturnType<typeof connectBus>>
  try {
    nc = await connectBus(settings.bus, 'publishing')
  } catch (e) {
    say(`warning: not publishing to the bus: ${(e as Error).message}`)
    return undefined
  }
  const period = settings.consciousness_period_ms ?? DEFAULT_PERIOD_MS
  const bus = new ContractBus(natsConnection(nc), nodeId(settings.bus), say)
  const publisher = new ConsciousnessPublisher(engine, bus, period, say)
  publisher.start()
  say(`publishing the consciousness subjects to ${settings.bus.url} every ${period} ms as ${bus.sender}`)
  return { publisher, bus, close: () => nc.drain().catch(() => nc.close()) }
}

/** The parts of an OpenAPI document problemsAsSent reads. */
interface OpenApiPaths {
  paths?: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>
}

/**
 * The refusals as the server sends them (server/errors.ts): the generator gives every response the
 * route's JSON media type, where a 4xx or 5xx goes out as application/problem+json.
 */
function problemsAsSent<T extends OpenApiPaths>(doc: T): T {
  for (const ops of Object.values(doc.paths ?? {}))
    for (const op of Object.values(ops))
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const json = response.content?.['application/json']
        if (!json || !/^[45]/.test(status)) continue
        delete response.content!['application/json']
        response.content!['application/problem+json'] = json
      }
  return doc
}

// `crystal serve`: the REST API and the Observatory on 127.0.0.1:3339. `node server/index.js` runs
// this same command, so its flags are declared here once.
import { Option, type Command } from 'commander'
import { FIELD_SIZE } from '../../engine/contracts/api.js'
import { wholeNumber, type CliContext } from '../context.js'

export function registerServe(cli: Command, ctx: () => CliContext): void {
  cli
    .command('serve')
    .description('serve the REST API on 127.0.0.1:3339 (OpenAPI at /openapi.json, docs at /docs)')
    .option('--host <host>', 'address to bind (not loopback: SVC_CRYSTAL_API_TOKEN is required)', '127.0.0.1')
    .option('--port <port>', 'port', wholeNumber('--port', 0, 65535), 3339)
    .option('--size <n>', 'field side N', wholeNumber('--size', FIELD_SIZE.minimum, FIELD_SIZE.maximum), 128)
    .option('--material <name>', 'the material of the field', 'ideal_resonator')
    .option('--seed <n>', 'noise seed', wholeNumber('--seed', 0, 2 ** 32 - 1), 1)
    .option('--cors <origin...>', 'allow these origins (CORS is off by default)')
    .addOption(new Option('--log-level <level>', 'request log level; off by default').choices(['fatal', 'error', 'warn', 'info', 'debug']))
    .option('--material-file <file...>', 'also load these material files')
    .option(
      '--music <dir>',
      'run the station on this library, <artist>/<album>/*.mp3 (default: SVC_STATION_MUSIC, else ./music when it exists)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  crystal serve\n  crystal serve --port 8080 --size 256 --material europium_crystal\n  SVC_CRYSTAL_API_TOKEN=secret crystal serve --host 0.0.0.0\n  crystal serve --music ~/music    (the station at /stream)',
    )
    .action(
      async (o: {
        host: string
        port: number
        size: number
        material: string
        seed: number
        cors?: string[]
        logLevel?: string
        materialFile?: string[]
        music?: string
      }) => {
        const c = ctx()
        // the server's modules (Fastify, the station) load here, not for every command's start
        const [{ serve }, { stationConfig }] = await Promise.all([import('../../server/app.js'), import('../../server/station/station.js')])
        await serve(
          {
            host: o.host,
            port: o.port,
            dataDir: c.dataDir,
            backend: c.backend,
            size: o.size,
            material: o.material,
            seed: o.seed,
            settings: c.settings,
            cors: o.cors,
            logLevel: o.logLevel,
            materialFiles: o.materialFile,
            report: c.say,
            transfersTo: c.debug ? (line) => process.stderr.write(`${line}\n`) : undefined,
            station: stationConfig(o.music, c.settings.station, process.cwd()),
          },
          (line) => process.stderr.write(line + '\n'),
        )
      },
    )
}

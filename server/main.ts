// `node server/index.js [--host] [--port] ...`: the service without the `crystal` command name; the
// same flags, defaults and environment as `crystal serve`, which parses them (declared once there).
import { main } from '../cli/main.js'

process.exitCode = await main([...process.argv.slice(0, 2), 'serve', ...process.argv.slice(2)])

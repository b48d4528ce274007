// One table from error code to exit status (0 success, 1 the work failed, 2 the command was misused).
import type { ErrorCode } from '../engine/errors.js'

export const EXIT_STATUS: Record<ErrorCode, 1 | 2> = {
  bad_argument: 2,
  unknown_material: 2,
  bad_material: 1,
  backend_unavailable: 1,
  registry_corrupt: 1,
  registry_busy: 1,
  medium_corrupt: 1,
  not_found: 1,
  bad_program: 1,
  missing_credential: 1,
  publish_failed: 1,
  bus_unavailable: 1,
  limit_exceeded: 2,
  bad_message: 1,
  bad_audio: 1,
  no_music: 1,
  unauthorized: 2,
  internal: 1,
}

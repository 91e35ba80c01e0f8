// §13.13 Run archives: export a run with every object it references, import one verified.
export {
  ARCHIVE_LIMITS,
  RUN_ARCHIVE_FORMAT,
  exportRun,
  importRunArchive,
  openRunArchive,
  refuseMovedAway,
} from "./run.ts";
export type { ImportResult, OpenedArchive } from "./run.ts";
export { readArchive, writeArchive } from "./tar.ts";
export type { ArchiveLimits, ArchiveMember } from "./tar.ts";

// §13.13 Run archives: export a run with every object it references, import one verified.
export {
  ARCHIVE_LIMITS,
  RUN_ARCHIVE_FORMAT,
  exportRun,
  importOpenedArchive,
  importRunArchive,
  openRunArchive,
  refuseMovedAway,
} from "./run.ts";
export type { ImportResult, OpenedArchive } from "./run.ts";
export { readArchive, readArchiveStream, writeArchive } from "./tar.ts";
export type { ArchiveLimits, ArchiveMember, MemberSink, ReadInto } from "./tar.ts";
export type { PlainObjects } from "./staged.ts";

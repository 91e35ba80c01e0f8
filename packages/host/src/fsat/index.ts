// Directory-relative, link-refusing file operations for trees a unit controls (§13.8, §8.2, §12).
export {
  assertName,
  atPath,
  closeQuiet,
  createFileAt,
  errnoOf,
  listAt,
  lstatAt,
  mkdirAt,
  openDirAt,
  openFileAt,
  openRoot,
  readlinkAt,
  removeTreeAt,
  renameAt,
  symlinkAt,
} from "./at.ts";
export { createFilesAt, digestAt, hashOpenFile, openDirNoFollow, scanTreeAt, writeFilesAt } from "./tree.ts";
export { replaceTreeAt } from "./copy.ts";

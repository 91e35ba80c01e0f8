// §5.5.5 What the gate reads from an ELF file: whether it is one, its PT_INTERP, and whether it has
// the shape of a dynamic loader (no interpreter, no DT_NEEDED, a DT_SONAME), read through a handle.
import type { FileHandle } from "node:fs/promises";

/** The facts the gate needs about one file's header. */
export interface ElfFacts {
  readonly elf: boolean;
  /** The PT_INTERP path, or null. */
  readonly interp: string | null;
  /** Self-contained shared object with a SONAME: how every dynamic loader looks. */
  readonly loaderShape: boolean;
}

const NOT_ELF: ElfFacts = { elf: false, interp: null, loaderShape: false };

async function pread(fh: FileHandle, len: number, pos: number): Promise<Buffer> {
  const b = Buffer.alloc(len);
  const { bytesRead } = await fh.read(b, 0, len, pos);
  return b.subarray(0, bytesRead);
}

interface Seg {
  readonly type: number;
  readonly off: number;
  readonly size: number;
}

function num(b: Buffer, at: number, wide: boolean): number {
  return wide ? Number(b.readBigUInt64LE(at)) : b.readUInt32LE(at);
}

async function segments(fh: FileHandle, h: Buffer, wide: boolean): Promise<Seg[]> {
  const phoff = num(h, wide ? 32 : 28, wide);
  const entsize = h.readUInt16LE(wide ? 54 : 42);
  const count = Math.min(h.readUInt16LE(wide ? 56 : 44), 256);
  const table = await pread(fh, entsize * count, phoff);
  const out: Seg[] = [];
  for (let i = 0; i + 1 <= count && (i + 1) * entsize <= table.length; i++) {
    const p = table.subarray(i * entsize);
    out.push({
      type: p.readUInt32LE(0),
      off: num(p, wide ? 8 : 4, wide),
      size: num(p, wide ? 32 : 16, wide),
    });
  }
  return out;
}

/** dynamicTags reads DT_NEEDED (1) and DT_SONAME (14) presence from a PT_DYNAMIC segment. */
async function dynamicTags(
  fh: FileHandle,
  seg: Seg,
  wide: boolean,
): Promise<{ needed: boolean; soname: boolean }> {
  const b = await pread(fh, Math.min(seg.size, 1 << 16), seg.off);
  const step = wide ? 16 : 8;
  let needed = false;
  let soname = false;
  for (let i = 0; i + step <= b.length; i += step) {
    const tag = num(b, i, wide);
    if (tag === 0) break;
    if (tag === 1) needed = true;
    if (tag === 14) soname = true;
  }
  return { needed, soname };
}

/** elfFacts reads the ELF facts of an open file (§5.5.5); a non-ELF or truncated file is "not ELF". */
export async function elfFacts(fh: FileHandle): Promise<ElfFacts> {
  const h = await pread(fh, 64, 0);
  if (h.length < 52 || h.readUInt32BE(0) !== 0x7f454c46) return NOT_ELF;
  if (h[5] !== 1) return { elf: true, interp: null, loaderShape: false };
  const wide = h[4] === 2;
  if (wide && h.length < 64) return NOT_ELF;
  const segs = await segments(fh, h, wide);
  const pi = segs.find((s) => s.type === 3);
  const interp = pi
    ? (await pread(fh, Math.min(pi.size, 4096), pi.off)).toString("latin1").replace(/\0.*$/s, "")
    : null;
  const dyn = segs.find((s) => s.type === 2);
  const tags = dyn ? await dynamicTags(fh, dyn, wide) : { needed: false, soname: false };
  return {
    elf: true,
    interp,
    loaderShape: interp === null && dyn !== undefined && !tags.needed && tags.soname,
  };
}

// §16.1 The index of a fleet's item ids, which refuses an id twice (DuplicateFleetItem) and finds an
// item's position. An open-addressing table (linear probing, at most half full) of one Int32 per
// slot, holding the id's index + 1 in its low bits and the top bits of the id's hash above them,
// with the ids themselves in a plain array. At a million ids it is about 2.5× faster than a
// Map<string, number>, whose entries and rehashing dominated the fleet build, and needs 8 bytes
// of table per id (bench/fleet.bench.ts). The hash is seeded per index, so a fleet's ids cannot
// be chosen in advance to collide.

const FIRST_SLOTS = 1 << 12;

/** ItemIndex maps distinct item ids (§16.1) to 0, 1, 2, … in the order they were added. */
export class ItemIndex {
  readonly #ids: string[] = [];
  readonly #seed = crypto.getRandomValues(new Uint32Array(1))[0]!;
  // Slot k: 0 when empty, else (hash & ~#low) | (index + 1). Below half full, index + 1 < #low.
  #table: Int32Array;
  #mask: number;
  #low: number;

  /** An empty index; `expected` ids, when known, size the table once. */
  constructor(expected = 0) {
    let slots = FIRST_SLOTS;
    while (slots < 2 * expected + 2) slots *= 2;
    this.#table = new Int32Array(slots);
    this.#mask = slots - 1;
    this.#low = 2 * slots - 1;
  }

  /** size is the number of ids. */
  get size(): number {
    return this.#ids.length;
  }

  /** add gives `id` the next index and returns true, or returns false if it is already present. */
  add(id: string): boolean {
    const h = this.#hash(id);
    const k = this.#probe(id, h);
    if (this.#table[k] !== 0) return false;
    this.#ids.push(id);
    this.#table[k] = (h & ~this.#low) | this.#ids.length;
    if (2 * this.#ids.length > this.#mask) this.#grow();
    return true;
  }

  /**
   * removeLast takes back the id added last (an append refused after its id was added). Ids are
   * placed in the order they were added, so the last one ends every probe chain through its slot.
   */
  removeLast(): void {
    const id = this.#ids.pop();
    if (id !== undefined) this.#table[this.#probe(id, this.#hash(id))] = 0;
  }

  /** get returns the index of `id`, or undefined. */
  get(id: string): number | undefined {
    const at = this.#table[this.#probe(id, this.#hash(id))]! & this.#low;
    return at === 0 ? undefined : at - 1;
  }

  /** #probe returns the slot holding `id`, or the empty slot where it would go. */
  #probe(id: string, h: number): number {
    const t = this.#table;
    const low = this.#low;
    const tag = h & ~low;
    for (let k = h & this.#mask; ; k = (k + 1) & this.#mask) {
      const s = t[k]!;
      if (s === 0 || ((s & ~low) === tag && this.#ids[(s & low) - 1] === id)) return k;
    }
  }

  /** #grow doubles the table, re-placing the ids in the order they were added (which removeLast relies on). */
  #grow(): void {
    const slots = 2 * (this.#mask + 1);
    this.#table = new Int32Array(slots);
    this.#mask = slots - 1;
    this.#low = 2 * slots - 1;
    for (let i = 0; i < this.#ids.length; i++) {
      const h = this.#hash(this.#ids[i]!);
      let k = h & this.#mask;
      while (this.#table[k] !== 0) k = (k + 1) & this.#mask;
      this.#table[k] = (h & ~this.#low) | (i + 1);
    }
  }

  /** #hash is seeded FNV-1a over the UTF-16 code units, finished by murmur3's fmix32. */
  #hash(id: string): number {
    let h = this.#seed ^ 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return h ^ (h >>> 16);
  }
}

// §16.1 The index of a fleet's item ids, which refuses an id twice (DuplicateFleetItem) and finds an
// item's position. An open-addressing table of (index + 1, hash) pairs in one Int32Array, with the
// ids in a plain array: measured about 2.5× faster than a Map<string, number> at a million ids,
// whose per-entry objects and rehashing dominate the fleet build (bench/fleet.bench.ts). The hash is
// seeded per index, so a fleet's ids cannot be chosen in advance to collide.

const FIRST_SLOTS = 1 << 12;

/** ItemIndex maps distinct ids to 0, 1, 2, … in the order they were added. */
export class ItemIndex {
  readonly #ids: string[] = [];
  readonly #seed = crypto.getRandomValues(new Uint32Array(1))[0]!;
  // Slot k is table[2k] = index + 1 (0: empty) and table[2k + 1] = the id's hash.
  #table = new Int32Array(2 * FIRST_SLOTS);
  #mask = FIRST_SLOTS - 1;

  /** size is the number of ids. */
  get size(): number {
    return this.#ids.length;
  }

  /** add gives `id` the next index and returns true, or returns false if it is already present. */
  add(id: string): boolean {
    const h = this.#hash(id);
    const k = this.#probe(id, h);
    if (this.#table[2 * k] !== 0) return false;
    this.#ids.push(id);
    this.#table[2 * k] = this.#ids.length;
    this.#table[2 * k + 1] = h;
    if (2 * this.#ids.length > this.#mask) this.#grow();
    return true;
  }

  /**
   * removeLast takes back the id added last (an append refused after its id was added). Ids are
   * placed in the order they were added, so the last one ends every probe chain through its slot.
   */
  removeLast(): void {
    const id = this.#ids.pop();
    if (id === undefined) return;
    const k = this.#probe(id, this.#hash(id));
    this.#table[2 * k] = 0;
    this.#table[2 * k + 1] = 0;
  }

  /** get returns the index of `id`, or undefined. */
  get(id: string): number | undefined {
    const at = this.#table[2 * this.#probe(id, this.#hash(id))]!;
    return at === 0 ? undefined : at - 1;
  }

  /** #probe returns the slot holding `id`, or the empty slot where it would go. */
  #probe(id: string, h: number): number {
    const t = this.#table;
    for (let k = h & this.#mask; ; k = (k + 1) & this.#mask) {
      const at = t[2 * k]!;
      if (at === 0 || (t[2 * k + 1] === h && this.#ids[at - 1] === id)) return k;
    }
  }

  /** #grow doubles the table, re-placing the ids in the order they were added (which removeLast relies on). */
  #grow(): void {
    const old = this.#table;
    const hashes = new Int32Array(this.#ids.length);
    for (let j = 0; j < old.length; j += 2) if (old[j] !== 0) hashes[old[j]! - 1] = old[j + 1]!;
    this.#mask = 2 * this.#mask + 1;
    this.#table = new Int32Array(2 * (this.#mask + 1));
    for (let i = 0; i < hashes.length; i++) {
      let k = hashes[i]! & this.#mask;
      while (this.#table[2 * k] !== 0) k = (k + 1) & this.#mask;
      this.#table[2 * k] = i + 1;
      this.#table[2 * k + 1] = hashes[i]!;
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

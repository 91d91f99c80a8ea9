// The statistics of a Life or campaign game: each colour's live cell count over
// generations, one row per generation (the counts of the newest view seen at it). Fed by
// every view a screen gets (stream and REST) and by sampled replays of the past
// (backfill.js); drawn by chart.js. Events: 'change'.

/** Charts by name for tests and debugging: `window.cellwarCharts[name]()` → series JSON. */
const registry = {};
if (typeof window !== 'undefined') window.cellwarCharts = registry;

export class CellSeries extends EventTarget {
  /**
   * @param {{name?: string, resetOnRewind?: boolean}} [opts] `name` registers the series
   *   in `window.cellwarCharts`; `resetOnRewind` starts over when the generation goes
   *   back (a campaign level restarted), which a replay (views in any order) must not.
   */
  constructor({ name = '', resetOnRewind = false } = {}) {
    super();
    this.rows = new Map(); // generation → {seq, source, counts: {pid: cells}}
    this.pids = [];
    this.resetOnRewind = resetOnRewind;
    this.lastGeneration = -1;
    this.gameId = null;
    if (name) registry[name] = () => this.toJSON();
  }

  /**
   * The cell counts of a view, `{pid: cells}` (campaign: the enemy as colour 2), or null
   * when the view hides any (blind placement) or is not a Life board.
   * @param {object} view
   * @returns {?Object<string, number>}
   */
  static counts(view) {
    if (!view || view.kind === 'cellwar' || !Number.isFinite(view.generation)) return null;
    const out = {};
    for (const p of view.players || []) {
      if (!Number.isFinite(p.cells)) return null;
      out[p.id] = p.cells;
    }
    if (view.kind === 'campaign') {
      if (!Number.isFinite(view.enemy_cells)) return null;
      out[2] = view.enemy_cells;
    }
    return Object.keys(out).length ? out : null;
  }

  /** Forget everything (another game). */
  reset(gameId = null) {
    this.rows = new Map();
    this.pids = [];
    this.lastGeneration = -1;
    this.gameId = gameId;
    this._changed();
  }

  /**
   * Take a view's counts at its generation, unless a newer view of that generation is
   * already held. Seqs are compared only between views of one source (a seat's seq is
   * its own version: seats of one game count differently); between two live seats the
   * later view wins, and a view of the past (`source` 'past': backfill.js) never
   * replaces a live one. Returns true when the series changed.
   * @param {object} view
   * @param {number} [seq] the message's seq when the view carries none
   * @param {number|string} [source] whose numbering `seq` is in (a seat id; 'past')
   */
  add(view, seq, source = 0) {
    const counts = CellSeries.counts(view);
    if (!counts) return false;
    const g = view.generation;
    const s = view.seq ?? seq ?? 0;
    if (source !== 'past') { // the past comes in any order, after live views
      if (this.resetOnRewind && g < this.lastGeneration) {
        this.rows = new Map();
        this.pids = [];
      }
      this.lastGeneration = g;
    }
    const old = this.rows.get(g);
    if (old && old.source === source && old.seq > s) return false;
    if (old && source === 'past' && old.source !== 'past') return false;
    if (old && Object.keys(counts).every((k) => old.counts[k] === counts[k])
        && Object.keys(old.counts).length === Object.keys(counts).length) {
      if (old.source === source) old.seq = Math.max(old.seq, s);
      return false;
    }
    this.rows.set(g, { seq: s, source, counts });
    for (const k of Object.keys(counts)) {
      const pid = Number(k);
      if (!this.pids.includes(pid)) this.pids = [...this.pids, pid].sort((a, b) => a - b);
    }
    this._changed();
    return true;
  }

  /** uPlot's data: [generations ascending, counts of each pid in `pids` order]. */
  data() {
    const gens = [...this.rows.keys()].sort((a, b) => a - b);
    return [gens, ...this.pids.map((pid) => gens.map((g) => this.rows.get(g).counts[pid] ?? null))];
  }

  /** `{gameId, generations: [...], counts: {pid: [...]}}` (tests, debugging). */
  toJSON() {
    const [gens, ...ys] = this.data();
    const counts = {};
    this.pids.forEach((pid, i) => { counts[pid] = ys[i]; });
    return { gameId: this.gameId, generations: gens, counts };
  }

  get size() {
    return this.rows.size;
  }

  _changed() {
    this.dispatchEvent(new Event('change'));
  }
}

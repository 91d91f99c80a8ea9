// The past of a chart: when a screen opens a game whose simulation already ran (a reload,
// "Continue game", a replay), the counts of earlier generations come from the replay
// views of a sample of its `GenerationsTicked` events (GET /game/{id}/replay?seq=n), a
// few requests at a time. The live views then take over.

import { gamePath, request } from '../http.js';

/**
 * The seqs to sample: the event before the first generation (the board when the
 * simulation started) and up to `n` `GenerationsTicked` events spread evenly, the last
 * one always included.
 * @param {Array<{seq: number, type: string}>} events the log, in order
 * @param {number} n
 * @returns {number[]} ascending
 */
export function sampleSeqs(events, n = 48) {
  const ticks = [];
  let start = null;
  events.forEach((e, i) => {
    if (e.type !== 'GenerationsTicked') return;
    if (!ticks.length && i > 0) start = events[i - 1].seq;
    ticks.push(e.seq);
  });
  let picked = ticks;
  if (ticks.length > n) {
    picked = [];
    for (let k = 0; k < n; k++) picked.push(ticks[Math.round((k * (ticks.length - 1)) / (n - 1))]);
  }
  const out = new Set(start === null ? picked : [start, ...picked]);
  // The end of a finished game, for the final counts.
  const last = events[events.length - 1];
  if (last && last.type === 'GameFinished') out.add(last.seq);
  return [...out].sort((a, b) => a - b);
}

/**
 * Fill `series` with sampled replay views of game `gameId`.
 * @param {import('./series.js').CellSeries} series
 * @param {string} gameId
 * @param {{token?: string, events?: Array<object>, n?: number, alive?: () => boolean}} [opts]
 *   `events`: the log when the caller has it (else fetched); `alive()` false stops it
 *   (the screen moved on).
 * @returns {Promise<Array<object>>} the log
 */
export async function backfill(series, gameId, { token, events, n = 48, alive = () => true } = {}) {
  const log = events || (await request('GET', `${gamePath(gameId)}/events?from_seq=0`, { token })).events || [];
  const seqs = sampleSeqs(log, n);
  // Two at a time: the gateway runs few costly reads at once (CELLWAR_READ_CONCURRENCY).
  const parallel = 2;
  for (let i = 0; i < seqs.length && alive(); i += parallel) {
    await Promise.all(seqs.slice(i, i + parallel).map((seq) => request('GET', `${gamePath(gameId)}/replay?seq=${seq}`, { token })
      .then((res) => { if (alive()) series.add(res.view, res.seq ?? seq, 'past'); })
      .catch(() => {})));
  }
  return log;
}

// Multi-state RLE (Golly's convention) as used by the CellWar view's `board`:
// '.' dead, 'A' colour 1, 'B' colour 2, ... 'X' state 24, 'pA'..'yO' states 25..255;
// a run count may precede any token; '$' ends a row (a count skips rows); '!' ends it.
// Two-state 'b' (dead) and 'o' (state 1) are accepted too. Trailing dead cells of a
// row and trailing empty rows may be omitted. Header lines ("x = ...") and '#'
// comment lines are skipped; lines may end with LF, CRLF or CR.
// The format is defined by the views' board codec, proto/cellwar/v1/board_codec.py
// (Python, `cellwar.v1.board_codec`); tests/client/test_rle_js.py runs this decoder and
// encoder on the codec's texts and asserts the same cells and the same texts.

/**
 * Decode an RLE board into a row-major Uint8Array of width*height states.
 * @param {string} text the RLE
 * @param {number} width cells
 * @param {number} height cells
 * @param {Uint8Array} [out] reused when its length fits
 * @returns {Uint8Array}
 * @throws {Error} on a character that is not part of the format
 */
export function decodeBoard(text, width, height, out) {
  const cells = out && out.length === width * height ? out : new Uint8Array(width * height);
  cells.fill(0);
  if (!text) return cells;
  const body = text.includes('\n') || text.includes('\r') // LF, CRLF or CR line ends
    ? text.split(/\r\n?|\n/).filter((l) => !/^\s*(#|x\s*=)/.test(l)).join('')
    : text;
  let x = 0;
  let y = 0;
  let count = 0;
  let prefix = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const c = body.charCodeAt(i);
    if (c >= 48 && c <= 57) { // digit
      count = count * 10 + (c - 48);
      continue;
    }
    const run = count || 1;
    count = 0;
    if (c === 46 || c === 98) { // '.' or 'b'
      x += run;
    } else if (c >= 65 && c <= 88) { // 'A'..'X'
      const state = prefix ? prefix * 24 + (c - 64) : c - 64;
      prefix = 0;
      put(cells, width, height, x, y, run, state);
      x += run;
    } else if (c === 111) { // 'o'
      put(cells, width, height, x, y, run, 1);
      x += run;
    } else if (c >= 112 && c <= 121) { // 'p'..'y' prefix of states > 24
      prefix = c - 111;
      count = run; // the count belongs to the two-letter tag ('3pA' is three cells)
    } else if (c === 36) { // '$'
      y += run;
      x = 0;
    } else if (c === 33) { // '!'
      break;
    } else if (c === 32 || c === 9 || c === 13 || c === 10) {
      // whitespace
    } else {
      throw new Error(`RLE: unexpected character '${body[i]}' at ${i}`);
    }
  }
  return cells;
}

function put(cells, width, height, x, y, run, state) {
  if (y >= height || y < 0) return;
  const end = Math.min(x + run, width);
  const row = y * width;
  for (let k = Math.max(x, 0); k < end; k++) cells[row + k] = state;
}

/**
 * Encode a row-major board as multi-state RLE (no header), the inverse of decodeBoard.
 * @param {Uint8Array} cells
 * @param {number} width
 * @param {number} height
 * @returns {string}
 */
export function encodeBoard(cells, width, height) {
  const token = (s) => (s === 0 ? '.' : s <= 24 ? String.fromCharCode(64 + s)
    : String.fromCharCode(111 + Math.floor((s - 1) / 24)) + String.fromCharCode(65 + ((s - 1) % 24)));
  let out = '';
  let emptyRows = 0;
  for (let y = 0; y < height; y++) {
    let row = '';
    let x = 0;
    let lastLive = -1;
    for (let k = 0; k < width; k++) if (cells[y * width + k]) lastLive = k;
    while (x <= lastLive) {
      const s = cells[y * width + x];
      let r = 1;
      while (x + r <= lastLive && cells[y * width + x + r] === s) r++;
      row += (r > 1 ? r : '') + token(s);
      x += r;
    }
    if (!row) { emptyRows++; continue; }
    if (out || emptyRows) {
      const skip = emptyRows + (out ? 1 : 0);
      out += skip ? (skip > 1 ? skip : '') + '$' : '';
    }
    emptyRows = 0;
    out += row;
  }
  return out + '!';
}

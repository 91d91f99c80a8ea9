"""The browser's command path (client/web/js/api.js ``command``) under node, with a fake
WebSocket and fetch: a command goes as a frame over the seat's open stream, answered by
the ``result`` of its id; one whose frame is above the gateway's frame limit (4096 bytes)
goes by REST at once, and a 413 error frame without an id (the server could not read the
frame) sends the oldest waiting command by REST with the same Idempotency-Key, instead
of waiting for the command timeout."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "client" / "web" / "js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: Plays the cases; prints {"frames": [...], "posts": [...], "answers": [...]}. The command
#: timeout (10 s) never fires here: a command left waiting for it never settles, and node
#: exits with an unsettled top-level await (a failure, not a slow pass).
RUNNER = """
const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = (fn, ms, ...args) => (ms >= 10000 ? 0 : realSetTimeout(fn, ms, ...args));
const frames = [];
const posts = [];
let tooLarge = false;  // the fake server answers 413 without an id
globalThis.location = { protocol: 'http:', host: 'gateway.test' };
globalThis.fetch = async (path, opts) => {
  posts.push({ path, key: opts.headers['Idempotency-Key'], bytes: (opts.body || '').length });
  return { ok: true, status: 200, json: async () => ({ seq: 50, view: {} }) };
};
class FakeSocket {
  static OPEN = 1;
  constructor() {
    this.readyState = 0;
    setTimeout(() => { this.readyState = 1; this.onopen(); }, 0);
  }
  send(text) {
    const frame = JSON.parse(text);
    frames.push({ type: frame.type, id: frame.id, bytes: text.length });
    const answer = tooLarge
      ? { type: 'error', id: null, status: 413, error: { code: 'PAYLOAD_TOO_LARGE', message: 'big' } }
      : { type: 'result', id: frame.id, seq: 7, view: {} };
    setTimeout(() => this.onmessage({ data: JSON.stringify(answer) }), 0);
  }
  close() { this.readyState = 3; }
}
globalThis.WebSocket = FakeSocket;
const { api, openStream } = await import('./api.js');
const stream = openStream('g1', 'tok', { onMessage: () => {} });
await new Promise((r) => setTimeout(r, 10));
const cells = (n) => Array.from({ length: n }, (_, i) => [i % 300, Math.floor(i / 300)]);
const answers = [];
answers.push(await api.action('g1', 'tok', { type: 'place', cells: cells(3) }));
answers.push(await api.action('g1', 'tok', { type: 'place', cells: cells(800) }));
tooLarge = true;  // a server with a smaller limit than the client's
answers.push(await api.endTurn('g1', 'tok'));
stream.close();
process.stdout.write(JSON.stringify({ frames, posts, answers }));
"""


def test_a_command_too_large_for_a_frame_goes_by_rest_at_once(tmp_path: Path):
    for name in ("api.js", "http.js"):
        shutil.copy(JS / name, tmp_path / name)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "run.mjs").write_text(RUNNER)
    out = subprocess.run(
        [NODE, "run.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout)
    frames, posts = seen["frames"], seen["posts"]
    # the small action: a frame answered by its result
    assert [f["type"] for f in frames] == ["action", "end_turn"]
    assert seen["answers"][0] == {"seq": 7, "view": {}}
    # the large one (> 4096 bytes): by REST, never a frame
    assert posts[0]["path"] == "/game/g1/action" and posts[0]["bytes"] > 4096
    assert all(f["bytes"] <= 4096 for f in frames)
    # the end of turn answered 413 without an id: by REST with the frame's own id
    assert posts[1]["path"] == "/game/g1/end_turn" and posts[1]["key"] == frames[1]["id"]
    assert seen["answers"][1:] == [{"seq": 50, "view": {}}] * 2

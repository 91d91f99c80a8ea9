"""The LLM player against the real local model server (SmolLM2-135M-Instruct through
llama-cpp-python's OpenAI-compatible server): answers decoded under the enum, the
validation, retry and fallback counts, the errors of a missing model, a server that is
down, one that does not answer and a page that is no chat server."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from client.bots import load_policy
from client.bots.llm import ChatClient, LifePlacer, LLMError, LLMErrorCode, LLMPolicy, move_schema
from client.bots.llm_local import SMOLLM2_ALIAS, free_port
from client.rl import cellwar_env
from client.rl.arena import play_game

pytestmark = pytest.mark.timeout(300)


def test_the_answer_is_one_of_the_enum(llm_url: str):
    chat = ChatClient(llm_url, SMOLLM2_ALIAS)
    try:
        labels = ["fortify", "move S", "attack E"]
        messages = [{"role": "user", "content": "Pick a move from: fortify, move S, attack E."}]
        answer = json.loads(chat.complete(messages, move_schema(labels)))
        assert set(answer) == {"move"} and answer["move"] in labels
        # llama-cpp-python takes {"type": "json_object", "schema": ...}: the client switched
        assert chat.format_shape == "json_object"
    finally:
        chat.close()


def test_a_whole_6x6_game_in_process_every_move_by_the_model(llm_url: str):
    policy = load_policy("llm", url=llm_url, model=SMOLLM2_ALIAS, seed=1)
    env = cellwar_env(width=6, height=6, max_rounds=60)
    moves = {"n": 0}

    class Counting:
        def reset(self):
            policy.reset()

        def act(self, obs):
            action = policy.act(obs)
            assert obs["action_mask"][action] == 1
            moves["n"] += 1
            return action

    try:
        outcome = play_game(env, {"player_1": Counting(), "player_2": load_policy("heuristic", seed=2)}, seed=3)
    finally:
        policy.close()
    stats = policy.stats
    assert stats.moves == moves["n"] > 0
    assert stats.requests == stats.moves + stats.retries
    assert stats.fallbacks <= stats.invalid <= stats.requests
    assert outcome["winner"] in (1, 2, None)


class _NoLegalAnswer(LLMPolicy):
    """Sends a schema whose only value is no legal move: the real model must answer it,
    validation refuses it, the retry too, and the heuristic's move is played."""

    def schema(self, legal):
        return move_schema(["pass"])


def test_an_invalid_answer_is_retried_then_replaced_by_the_heuristic_move(llm_url: str):
    env = cellwar_env(width=6, height=6)
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    policy = _NoLegalAnswer(llm_url, SMOLLM2_ALIAS, retries=2)
    try:
        action = policy.act(obs)
    finally:
        policy.close()
    assert obs["action_mask"][action] == 1
    expected = load_policy("heuristic", seed=0).act(obs)
    assert action == expected
    s = policy.stats
    assert (s.moves, s.requests, s.invalid, s.retries, s.fallbacks) == (1, 3, 3, 2, 1)


def test_life_cells_inside_the_zone_within_the_budget(llm_url: str):
    placer = LifePlacer(llm_url, SMOLLM2_ALIAS, max_cells=8)
    taken = {(9, 2), (10, 2)}
    try:
        cells = placer.place((8, 0, 16, 6), 6, taken, fallback=lambda: [(8, 0)])
    finally:
        placer.close()
    s = placer.stats
    assert s.moves == 1 and s.requests == 1 + s.retries
    if s.fallbacks:
        assert cells == [(8, 0)]
    else:
        assert 1 <= len(cells) <= 6 and len(set(cells)) == len(cells)
        assert all(8 <= x < 16 and 0 <= y < 6 and (x, y) not in taken for x, y in cells)


def test_a_missing_model_is_one_clear_error(llm_url: str):
    policy = LLMPolicy(llm_url, "no-such-model")
    with pytest.raises(LLMError) as err:
        policy.check()
    policy.close()
    assert err.value.code == LLMErrorCode.MODEL_NOT_FOUND
    assert "'no-such-model'" in str(err.value) and SMOLLM2_ALIAS in str(err.value)


def test_a_server_that_is_down():
    policy = LLMPolicy(f"http://127.0.0.1:{free_port()}/v1", SMOLLM2_ALIAS)
    env = cellwar_env(width=6, height=6)
    env.reset(seed=1)
    with pytest.raises(LLMError) as err:
        policy.act(env.observe(env.agent_selection))
    assert err.value.code == LLMErrorCode.UNREACHABLE and "\n" not in str(err.value)
    assert policy.stats.requests == 0


def test_a_server_that_does_not_answer_times_out():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections (the backlog) and never answers
    try:
        chat = ChatClient(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", "m", timeout_s=0.5)
        with pytest.raises(LLMError) as err:
            chat.check()
        assert err.value.code == LLMErrorCode.TIMEOUT and "0.5 s" in str(err.value)
    finally:
        listener.close()


class _Static(BaseHTTPRequestHandler):
    def _answer(self):
        body = b"<html>a static site</html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815 (http.server's names)

    def log_message(self, *args):
        pass


def test_a_page_that_is_no_chat_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Static)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        chat = ChatClient(f"http://127.0.0.1:{server.server_address[1]}/v1", "m")
        chat.check()  # no model list there: the chat request tells
        with pytest.raises(LLMError) as err:
            chat.complete([{"role": "user", "content": "hi"}], move_schema(["a"]))
        assert err.value.code == LLMErrorCode.NOT_A_CHAT_SERVER
    finally:
        server.shutdown()
        server.server_close()


def test_the_observation_is_not_changed(llm_url: str):
    env = cellwar_env(width=6, height=6)
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    before = obs["observation"].copy(), obs["action_mask"].copy()
    policy = LLMPolicy(llm_url, SMOLLM2_ALIAS)
    try:
        policy.act(obs)
    finally:
        policy.close()
    assert np.array_equal(obs["observation"], before[0]) and np.array_equal(obs["action_mask"], before[1])

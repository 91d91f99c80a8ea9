"""``cellwar``: the event-log tool (docs/replays.md). Console script ``cellwar``, or
``python -m client.cli``.

Subcommands::

    cellwar export GAME_ID [--url URL] [--token TOKEN] [-o FILE]
    cellwar import FILE [--url URL] [--origin-game-id ID] [--idempotency-key KEY]
    cellwar verify FILE... [--workers N] [--quiet]
    cellwar verify --nats URL (--all | --game GAME_ID...) [--workers N]
    cellwar show FILE [--seq N] [--player P] [--png OUT] [--scale PX] [--color WHEN]
    cellwar games --nats URL [--abandoned [--idle-min N] [--clean]] [--json]

Exit codes (:class:`ExitCode`): 0 success (verify: every log OK); 1 a log failed
(verify: a hash mismatch, an event the rules refuse, a seq out of place; export: the
server refused or could not be reached; import: the server refused the log, e.g.
``LOG_MISMATCH`` at a seq, or could not be reached; show: the log does not fold to that
seq); 2 usage errors and files that cannot be read (verify: also logs without hashes). When verify
meets both, 1 wins: a tampered log is the finding that matters.

Progress bars (tqdm) go to standard error and only to a terminal (``--no-progress``
turns them off); results go to standard output.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from enum import IntEnum
from typing import Any

import httpx
from tqdm import tqdm

from client.cli.verify import LogResult, LogVerifier, Status, verify_events, verify_file
from client.logfile import LogFormatError

#: Server used when neither ``--url`` nor ``CELLWAR_URL`` is given.
DEFAULT_URL = "http://localhost:8000"
#: Events between two progress-bar updates of a single log.
_PROGRESS_EVERY = 256


class ExitCode(IntEnum):
    """Process exit codes of ``cellwar``."""

    OK = 0
    FAILED = 1
    USAGE = 2


def _out(line: str) -> None:
    """A result line on standard output, without breaking a progress bar."""
    tqdm.write(line, file=sys.stdout)


def _err(line: str) -> None:
    tqdm.write(line, file=sys.stderr)


def _bar(args: argparse.Namespace, **kw: Any) -> tqdm:
    """A progress bar on standard error; off unless standard error is a terminal."""
    disable = True if args.no_progress else None  # None: tqdm's own "only on a TTY"
    return tqdm(file=sys.stderr, disable=disable, dynamic_ncols=True, leave=False, **kw)


# ----------------------------------------------------------------------------- export


def cmd_export(args: argparse.Namespace) -> int:
    """``cellwar export``: write a game's log (REST) as JSON Lines."""
    from client.cli.export import export_log
    from client.sdk import ApiError

    output = args.output or "-"
    with _bar(args, unit="B", unit_scale=True, desc=f"export {args.game_id}") as bar:

        def on_bytes(received: int, total: int | None) -> None:
            if total is not None and bar.total != total:
                bar.total = total
            bar.update(received - bar.n)

        try:
            result = export_log(args.url, args.game_id, output, token=args.token, on_bytes=on_bytes)
        except ApiError as exc:
            _err(f"error: {exc.status} {exc.code}: {exc.message}")
            return ExitCode.FAILED
        except httpx.HTTPError as exc:
            _err(f"error: cannot reach {args.url}: {exc}")
            return ExitCode.FAILED
        except LogFormatError as exc:
            _err(f"error: the server's answer is not a log: {exc}")
            return ExitCode.FAILED
        except OSError as exc:
            _err(f"error: cannot write {output}: {exc.strerror or exc}")
            return ExitCode.USAGE
    where = "standard output" if output == "-" else output
    _err(f"exported {result.events} events of game {args.game_id} to {where}")
    if result.filtered:
        _err("note: a player's filtered log (no state_hash): cellwar verify cannot check it")
    elif result.last_type != "GameFinished":
        _err("note: the game is not finished; the file holds its log so far")
    return ExitCode.OK


# ----------------------------------------------------------------------------- import


def cmd_import(args: argparse.Namespace) -> int:
    """``cellwar import``: create a game from a log file (``POST /games/import``); prints
    the new game's id on standard output."""
    from client.cli.importer import import_file
    from client.sdk import ApiError

    _err(f"importing {args.file} to {args.url} (the server decides every event again)…")
    try:
        result = import_file(
            args.url, args.file, origin_game_id=args.origin_game_id, idempotency_key=args.idempotency_key
        )
    except LogFormatError as exc:
        _err(f"error: {exc}")
        return ExitCode.USAGE
    except ApiError as exc:
        where = f" at seq {exc.seq}" if exc.seq is not None else ""
        _err(f"refused{where}: {exc.status} {exc.code}: {exc.message}")
        return ExitCode.FAILED
    except httpx.HTTPError as exc:
        _err(f"error: cannot reach {args.url}: {exc}")
        return ExitCode.FAILED
    what = "a finished game" if result.finished else "a fork of its last state (seats free: join it)"
    _err(f"imported {result.sent} events of {args.file} as game {result.game_id}: {what}")
    _out(result.game_id)
    return ExitCode.OK


# ----------------------------------------------------------------------------- verify


def _verify_with_progress(path: str, bar: tqdm) -> LogResult:
    """Verify one file in this process, moving ``bar`` (events) as it folds."""
    from client.logfile import iter_events

    verifier = LogVerifier(path)
    pending = 0
    try:
        for line in iter_events(path):
            ok = verifier.feed(line.event, line.where)
            pending += 1
            if pending >= _PROGRESS_EVERY:
                bar.update(pending)
                pending = 0
            if not ok:
                break
    except LogFormatError as exc:
        where = f"{exc.where}: " if exc.where else ""
        verifier.error(str(exc.code), f"{exc.code}: {where}{exc.message}")
    bar.update(pending)
    return verifier.result()


def _report(results: Iterable[LogResult], args: argparse.Namespace, started: float) -> int:
    """Print each result (OK lines unless ``--quiet``) and the total; the exit code."""
    counts = {s: 0 for s in Status}
    events = checked = logs = 0
    for r in results:
        logs += 1
        counts[r.status] += 1
        events += r.events
        checked += r.checked
        if r.status is not Status.OK or not args.quiet:
            _out(r.line())
    seconds = max(time.perf_counter() - started, 1e-9)
    _out(
        f"total: {logs} log{'s' if logs != 1 else ''}, {events:,} events, {checked:,} hashes checked "
        f"in {seconds:.2f} s: {events / seconds:,.0f} events/s; "
        f"{counts[Status.OK]} OK, {counts[Status.FAIL]} FAIL, {counts[Status.ERROR]} ERROR"
    )
    if counts[Status.FAIL]:
        return ExitCode.FAILED
    if counts[Status.ERROR]:
        return ExitCode.USAGE
    return ExitCode.OK


def _verify_files(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.files)
    if "-" in paths and args.workers > 1:
        _err("error: standard input (-) cannot be verified with --workers > 1")
        return ExitCode.USAGE
    started = time.perf_counter()
    if args.workers <= 1:

        def one_by_one() -> Iterable[LogResult]:
            with _bar(args, unit=" events", desc="verify") as bar:
                for i, path in enumerate(paths, start=1):
                    bar.set_description(f"verify {i}/{len(paths)}")
                    yield _verify_with_progress(path, bar)

        return _report(one_by_one(), args, started)
    chunk = max(1, min(16, len(paths) // (args.workers * 8)))
    with _pool(args.workers) as pool:
        results = pool.map(verify_file, paths, chunksize=chunk)  # every chunk submitted now

        def in_pool() -> Iterable[LogResult]:
            with _bar(args, total=len(paths), unit=" logs", desc="verify") as bar:
                events = 0
                for result in results:
                    events += result.events
                    bar.update(1)
                    bar.set_postfix(events=f"{events:,}", refresh=False)
                    yield result

        return _report(in_pool(), args, started)


def _pool(workers: int) -> ProcessPoolExecutor:
    """A process pool of ``workers`` started by a fork server that has imported the
    verifier (and so the engine) once: safe however many threads this process has (tqdm,
    gRPC in a test process), and each worker starts without importing numpy again."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["client.cli.verify"])
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def _verify_log(item: tuple[str, list[dict[str, Any]]]) -> LogResult:
    """Pool worker: verify one game's events read from NATS."""
    source, events = item
    return verify_events(events, source)


async def _nats_results(
    args: argparse.Namespace, bar_factory: Callable[..., tqdm]
) -> tuple[list[LogResult], str | None]:
    from client.cli.nats_source import NatsReadError, stream_messages

    verifiers: dict[str, LogVerifier] = {}
    buffered: dict[str, list[dict[str, Any]]] = {}
    broken: dict[str, str] = {}
    with bar_factory(unit=" events", desc="read GAME_EVENTS") as bar:

        def on_total(n: int) -> None:
            if n:
                bar.total = n

        try:
            async for game_id, event, error in stream_messages(
                args.nats, game_ids=args.game or None, on_total=on_total
            ):
                bar.update(1)
                source = f"games.{game_id}.events"
                if event is None:
                    broken.setdefault(source, error)
                    continue
                if args.workers > 1:
                    buffered.setdefault(source, []).append(event)
                else:
                    verifiers.setdefault(source, LogVerifier(source)).feed(event)
        except NatsReadError as exc:
            return [], str(exc)
    if args.workers > 1:
        with _pool(args.workers) as pool:
            results = list(pool.map(_verify_log, buffered.items()))
    else:
        results = [v.result() for v in verifiers.values()]
    for source, message in broken.items():
        results.append(LogResult(source, Status.ERROR, 0, 0, None, "MALFORMED", message))
    return results, None


def _verify_nats(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    results, error = asyncio.run(_nats_results(args, lambda **kw: _bar(args, **kw)))
    if error is not None:
        _err(f"error: {error}")
        return ExitCode.USAGE
    if args.game:
        found = {r.source for r in results}
        for game_id in args.game:
            source = f"games.{game_id}.events"
            if source not in found:
                results.append(LogResult(source, Status.ERROR, 0, 0, None, "NOT_FOUND", "no event of this game"))
    return _report(results, args, started)


def cmd_verify(args: argparse.Namespace) -> int:
    """``cellwar verify``: fold logs offline and check every hash."""
    if args.workers < 1:
        _err("error: --workers must be >= 1")
        return ExitCode.USAGE
    if args.nats:
        if args.files:
            _err("error: give files or --nats, not both")
            return ExitCode.USAGE
        if not args.all and not args.game:
            _err("error: --nats needs --all or --game GAME_ID")
            return ExitCode.USAGE
        return _verify_nats(args)
    if args.all or args.game:
        _err("error: --all and --game need --nats URL")
        return ExitCode.USAGE
    if not args.files:
        _err("error: give one or more log files (or --nats URL --all)")
        return ExitCode.USAGE
    return _verify_files(args)


# ----------------------------------------------------------------------------- show


def _want_colour(when: str) -> bool:
    if when == "always":
        return True
    if when == "never":
        return False
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def cmd_show(args: argparse.Namespace) -> int:
    """``cellwar show``: the board at a seq, as text or PNG."""
    import engine
    from client.cli import render
    from client.logfile import read_events

    try:
        events = read_events(args.file)
    except LogFormatError as exc:
        _err(f"error: {exc}")
        return ExitCode.USAGE
    out_of_order = next((i for i, e in enumerate(events, start=1) if e["seq"] != i), None)
    if out_of_order is not None:
        _err(
            f"error: {args.file}: event #{out_of_order} has seq {events[out_of_order - 1]['seq']!r:.40},"
            f" not {out_of_order}: a log is numbered 1, 2, … (run cellwar verify)"
        )
        return ExitCode.FAILED
    last = events[-1]["seq"]
    seq = last if args.seq is None else args.seq
    upto = next((i for i, e in enumerate(events) if e["seq"] == seq), None)
    if upto is None:
        _err(f"error: {args.file} has no event with seq {seq} (its seqs run {events[0]['seq']}..{last})")
        return ExitCode.USAGE
    prefix = events[: upto + 1]
    try:
        state = engine.fold(
            None, [(e["type"], e["actor"], e["payload"], e.get("engine_version") or None) for e in prefix]
        )
    except engine.GameError as exc:
        _err(f"error: the log does not fold to seq {seq}: {exc.code}: {exc.message} (run cellwar verify)")
        return ExitCode.FAILED
    except Exception as exc:  # noqa: BLE001 - a payload the engine cannot read
        _err(f"error: the log does not fold to seq {seq}: {type(exc).__name__}: {exc} (run cellwar verify)")
        return ExitCode.FAILED
    recorded = events[upto].get("state_hash")
    if recorded and engine.state_hash(state) != recorded:
        _err(f"warning: the state at seq {seq} does not match its recorded hash (run cellwar verify)")
    seats = engine.summary(state).max_players
    if args.player is not None and not 0 <= args.player <= seats:
        _err(f"error: --player {args.player}: the game has seats 1..{seats} (0: a spectator)")
        return ExitCode.USAGE
    try:
        if args.player is None:
            view = engine.get_visible_state(state, None, reveal=True)
        else:  # 0: what a spectator was shown live
            view = engine.get_visible_state(state, args.player or None)
    except engine.GameError as exc:
        _err(f"error: no view for player {args.player}: {exc.code}: {exc.message}")
        return ExitCode.USAGE
    title = f"{os.path.basename(args.file)} · seq {seq} of {last} ({events[upto]['type']})"
    if args.png:
        try:
            width, height = render.write_png(view, args.png, scale=args.scale)
        except OSError as exc:
            _err(f"error: cannot write {args.png}: {exc.strerror or exc}")
            return ExitCode.USAGE
        except ValueError as exc:
            _err(f"error: {exc}")
            return ExitCode.USAGE
        _err(f"{title}: wrote {args.png} ({width}×{height} px)")
        return ExitCode.OK
    sys.stdout.write(render.render_text(view, title=title, colour=_want_colour(args.color)))
    return ExitCode.OK


# ----------------------------------------------------------------------------- parser


def _idempotency_key(text: str) -> str:
    from services.common.jsonwire import IDEMPOTENCY_KEY_PATTERN

    if not re.fullmatch(IDEMPOTENCY_KEY_PATTERN, text):
        raise argparse.ArgumentTypeError(
            f"{text!r:.60}: a key is 1..200 printable ASCII characters without spaces (e.g. a uuid4)"
        )
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def cmd_games(args: argparse.Namespace) -> int:
    """List the unfinished games of the lobby directory; ``--clean`` removes the abandoned
    ones from it (client/cli/games.py, docs/abandoned-games.md)."""
    from client.cli.games import as_json, list_games, table
    from client.cli.nats_source import NatsReadError

    if args.clean and not args.abandoned:
        _err("cellwar games: --clean needs --abandoned (it removes only abandoned games)")
        return ExitCode.USAGE
    try:
        rows = asyncio.run(
            list_games(args.nats, idle_min=args.idle_min, abandoned_only=args.abandoned, clean=args.clean)
        )
    except NatsReadError as exc:
        _err(f"cellwar games: {exc}")
        return ExitCode.FAILED
    if args.json:
        _out(as_json(rows))
        return ExitCode.OK
    for line in table(rows, clean=args.clean):
        _out(line)
    removed = sum(r.removed for r in rows)
    what = "abandoned " if args.abandoned else "unfinished "
    _out(f"{len(rows)} {what}game(s)" + (f", {removed} removed from the lobby directory" if args.clean else ""))
    return ExitCode.OK


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``cellwar`` argument parser (argparse exits 2 on a usage error)."""
    parser = argparse.ArgumentParser(
        prog="cellwar",
        description="CellWar event-log tool: export a game's log, verify logs offline, import a log "
        "into a new game, show a board.",
        epilog="Exit codes: 0 success, 1 a log failed (or the server refused), 2 usage or unreadable file.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser(
        "export", parents=[common], help="write a game's event log as JSON Lines",
        description="Read GET /game/{id}/events and write one event per line.",
    )
    p.add_argument("game_id", metavar="GAME_ID")
    p.add_argument(
        "--url", default=os.environ.get("CELLWAR_URL", DEFAULT_URL),
        help=f"server (default: $CELLWAR_URL or {DEFAULT_URL})",
    )
    p.add_argument("--token", help="a player token: that player's filtered log (default: spectator)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import", parents=[common], help="create a game from a log file",
        description="POST the log to /games/import: the server decides every event again through "
        "the engine and refuses a log whose recorded hashes do not match, naming the first bad seq. "
        "Prints the new game's id.",
    )
    p.add_argument("file", metavar="FILE", help="JSON Lines or {\"events\": [...]} file (- = stdin)")
    p.add_argument(
        "--url", default=os.environ.get("CELLWAR_URL", DEFAULT_URL),
        help=f"server (default: $CELLWAR_URL or {DEFAULT_URL})",
    )
    p.add_argument("--origin-game-id", metavar="ID", help="the game the log was exported from (kept as its origin)")
    p.add_argument(
        "--idempotency-key",
        type=_idempotency_key,
        metavar="KEY",
        help="retry-safe key (1..200 printable ASCII characters, no spaces): the same key imports once",
    )
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "verify", parents=[common], help="fold logs offline and check every recorded hash",
        description="Fold each log through the engine, event by event under its engine_version, "
        "and check every state_hash. Prints OK or the first bad seq per log, and a total in events/s.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="JSON Lines or {\"events\": [...]} files (- = stdin)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="processes (default 1)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only logs that are not OK, and the total")
    p.add_argument("--nats", metavar="URL", help="read the games from the NATS stream GAME_EVENTS instead")
    p.add_argument("--all", action="store_true", help="with --nats: every game in the stream")
    p.add_argument("--game", action="append", metavar="GAME_ID", help="with --nats: this game (repeatable)")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser(
        "show", parents=[common], help="print the board at a seq, or write a PNG",
        description="Fold a log to seq N and show the board (whole truth, or one player's view).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--seq", type=_positive, metavar="N", help="event seq (default: the last)")
    p.add_argument("--player", type=int, metavar="P", help="as player P saw it; 0: a live spectator (default: everything)")
    p.add_argument("--png", metavar="OUT", help="write a PNG picture instead of text")
    p.add_argument("--scale", type=_positive, metavar="PX", help="PNG pixels per cell (default: fits 800 px)")
    p.add_argument(
        "--color", "--colour", choices=("auto", "always", "never"), default="auto",
        help="ANSI colours (default: auto, on a terminal without NO_COLOR)",
    )
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "games", parents=[common], help="list unfinished games; remove abandoned ones from the lobby",
        description="Read the lobby directory (KV GAME_DIRECTORY) and each game's last event from NATS. "
        "--abandoned: only started games with no event for --idle-min minutes; --clean: remove those "
        "from the lobby directory (the event log stays; the game's next event lists it again). "
        "See docs/abandoned-games.md.",
    )
    p.add_argument(
        "--nats", default=os.environ.get("CELLWAR_NATS_URL", "nats://127.0.0.1:4222"), metavar="URL",
        help="NATS server (default: $CELLWAR_NATS_URL or nats://127.0.0.1:4222)",
    )
    p.add_argument("--abandoned", action="store_true", help="only abandoned games")
    p.add_argument(
        "--idle-min", type=_minutes, default=15.0, metavar="N",
        help="minutes without an event that make a started game abandoned (default: 15)",
    )
    p.add_argument("--clean", action="store_true", help="with --abandoned: remove them from the lobby directory")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_games)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``cellwar`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    args = build_parser().parse_args(argv)
    from services.common.settings import unknown_variables

    for line in unknown_variables():  # a misspelt CELLWAR_URL would be ignored unseen
        _err(f"warning: {line}")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:  # e.g. piped into head
        return ExitCode.OK


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())

"""Deterministic generator of campaign levels 8-103 (the Life seed's "Кампания").

The output is checked in as ``engine/campaign/data/levels_generated.json`` and loaded by
:func:`engine.campaign.levels`; this module is only run by
``tools/gen_campaign_levels.py`` and by the test that regenerates the file in memory and
compares it byte for byte.

Determinism: a fixed seed (:data:`SEED`) and a private SplitMix64 generator
(:class:`Rng`), one stream per level derived from the seed and the level number; no
global ``random`` state, no numpy global state, no floating point in any decision, no
iteration over sets or hash-ordered containers.

What a level looks like (all sizes in cells):

* board: the longer side grows with the level from 40 (level 8) to 300 (level 103,
  300x300); about one level in four is rectangular (the shorter side 60-80 % of the
  longer);
* zone: a half-open rectangle of one of many shapes (half, centre, corner, narrow
  strip, arbitrary rectangle), never the whole board;
* enemy: still lifes and oscillators from the pattern library
  (:func:`engine.life.patterns.get`), in random orientations, outside the zone or only
  partly in it, with at least :data:`MARGIN` dead cells between the footprints of any
  two figures (the footprint covers every phase of an oscillator) and from the board
  edge, so the figures never interact; the assembled board is checked with
  :func:`engine.life.step` to be a still life or an oscillator of period <= 15;
* levels in :data:`HOPELESS` add a Gosper glider gun on purpose (nearly impossible,
  ``hopeless: true``; the stability check does not apply to them);
* budget: grows with the enemy's size and its distance from the zone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from engine.campaign.levels import HAND_LEVEL_COUNT, LEVEL_COUNT, Level
from engine.life import step

#: The generator's fixed seed.
SEED = 0x5EED_CE11_3A7
#: Bumped whenever the output format or the algorithm changes on purpose.
GENERATOR_VERSION = 1
#: First and last generated level.
FIRST_LEVEL = HAND_LEVEL_COUNT + 1
LAST_LEVEL = LEVEL_COUNT
#: Levels that carry a Gosper glider gun (nearly impossible on purpose).
HOPELESS = (50, 75, 100)
#: Dead cells kept between figure footprints and between a footprint and the edge.
MARGIN = 2
#: Stability check: the board after ``SETTLE`` generations must recur within ``MAX_PERIOD``.
SETTLE = 30
MAX_PERIOD = 15

_MASK64 = (1 << 64) - 1


class Rng:
    """SplitMix64: a tiny, fully specified PRNG (same numbers on every platform/version)."""

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK64

    def next64(self) -> int:
        """The next 64-bit unsigned integer."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in ``0..n-1`` (rejection sampling, no modulo bias).

        Raises:
            ValueError: ``n < 1``.
        """
        if n < 1:
            raise ValueError(f"below({n}): n must be >= 1")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            v = self.next64()
            if v < limit:
                return v % n

    def between(self, lo: int, hi: int) -> int:
        """Uniform integer in ``lo..hi`` inclusive."""
        return lo + self.below(hi - lo + 1)

    def chance(self, num: int, den: int) -> bool:
        """True with probability ``num/den``."""
        return self.below(den) < num

    def choice(self, seq: Sequence):
        """A uniformly chosen element of a non-empty sequence."""
        return seq[self.below(len(seq))]

    def weighted(self, items: Sequence[tuple[object, int]]):
        """An item chosen with integer weights: ``[(item, weight), ...]``."""
        total = sum(w for _, w in items)
        r = self.below(total)
        for item, w in items:
            if r < w:
                return item
            r -= w
        raise AssertionError("unreachable")

    def shuffle(self, items: list) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def level_rng(number: int) -> Rng:
    """The independent stream of level ``number`` (changing one level never shifts another)."""
    mixer = Rng(SEED ^ (number * 0x9E3779B97F4A7C15))
    return Rng(mixer.next64())


# --------------------------------------------------------------------------- figures

#: Display names (English singular, Russian singular) of the figures used.
FIGURE_NAMES: dict[str, tuple[str, str]] = {
    "block": ("block", "блок"),
    "beehive": ("beehive", "улей"),
    "tub": ("tub", "ванна"),
    "boat": ("boat", "лодка"),
    "ship": ("ship", "кораблик"),
    "loaf": ("loaf", "каравай"),
    "eater": ("eater", "пожиратель"),
    "pond": ("pond", "пруд"),
    "aircraft_carrier": ("aircraft carrier", "авианосец"),
    "long_boat": ("long boat", "длинная лодка"),
    "canoe": ("canoe", "каноэ"),
    "blinker": ("blinker", "мигалка"),
    "toad": ("toad", "жаба"),
    "beacon": ("beacon", "маяк"),
    "clock": ("clock", "часы"),
    "pulsar": ("pulsar", "пульсар"),
    "pentadecathlon": ("pentadecathlon", "пентадекатлон"),
    "gosper_glider_gun": ("Gosper glider gun", "ружьё Госпера"),
}

STILL_LIFES = (
    "block",
    "beehive",
    "tub",
    "boat",
    "ship",
    "loaf",
    "eater",
    "pond",
    "aircraft_carrier",
    "long_boat",
    "canoe",
)
SMALL_OSCILLATORS = ("blinker", "toad", "beacon", "clock")
BIG_OSCILLATORS = ("pulsar", "pentadecathlon")
GUN = "gosper_glider_gun"


@dataclass(frozen=True)
class Figure:
    """One orientation of a library figure, normalised to a phase of its cycle.

    ``cells`` are ``(x, y)`` relative to the footprint's top-left; the footprint
    (``fw`` x ``fh`` cells) holds every live cell of every phase.
    """

    name: str
    cells: tuple[tuple[int, int], ...]
    fw: int
    fh: int
    period: int


def _library_board(name: str) -> np.ndarray:
    """The pattern library's board for ``name`` as a 0/1 uint8 array."""
    from engine.life import patterns  # the stamp library

    board = np.asarray(patterns.get(name).board)
    return (board > 0).astype(np.uint8)


def _orientations(board: np.ndarray) -> list[np.ndarray]:
    """The distinct images of ``board`` under the 8 symmetries of the square, in a fixed order."""
    out: list[np.ndarray] = []
    seen: set[tuple[tuple[int, int], bytes]] = set()
    for flip in (False, True):
        b = np.fliplr(board) if flip else board
        for k in range(4):
            r = np.ascontiguousarray(np.rot90(b, -k))
            key = (r.shape, r.tobytes())
            if key not in seen:
                seen.add(key)
                out.append(r)
    return out


def _normalise(name: str, board: np.ndarray) -> Figure:
    """Put ``board`` into a phase of its cycle and measure its footprint and period.

    Raises:
        ValueError: the figure is not a still life or an oscillator of period <= 15.
    """
    pad = 12
    h, w = board.shape
    space = np.zeros((h + 2 * pad, w + 2 * pad), dtype=np.uint8)
    space[pad : pad + h, pad : pad + w] = board * 2
    settled = step(space, generations=SETTLE)
    phases = [settled]
    period = 0
    cur = settled
    for p in range(1, MAX_PERIOD + 1):
        cur = step(cur)
        if np.array_equal(cur, settled):
            period = p
            break
        phases.append(cur)
    if period == 0 or not settled.any():
        raise ValueError(f"pattern {name!r} is not a still life or an oscillator (period <= 15)")
    # Prefer the library's own phase when it lies on the cycle.
    start = next((ph for ph in phases if np.array_equal(ph, space)), settled)
    union = np.zeros_like(space, dtype=bool)
    for ph in phases:
        union |= ph > 0
    ys, xs = np.nonzero(union)
    y0, x0 = int(ys.min()), int(xs.min())
    fh, fw = int(ys.max()) - y0 + 1, int(xs.max()) - x0 + 1
    if y0 == 0 or x0 == 0 or y0 + fh >= space.shape[0] or x0 + fw >= space.shape[1]:
        raise ValueError(f"pattern {name!r} grows beyond its padding")
    sy, sx = np.nonzero(start)
    cells = tuple(sorted((int(x) - x0, int(y) - y0) for y, x in zip(sy, sx, strict=True)))
    return Figure(name=name, cells=cells, fw=fw, fh=fh, period=period)


@cache
def figure_variants(name: str) -> tuple[Figure, ...]:
    """Every distinct orientation of a stable library figure, normalised."""
    return tuple(_normalise(name, b) for b in _orientations(_library_board(name)))


@cache
def gun_variants() -> tuple[tuple[Figure, tuple[int, int]], ...]:
    """Orientations of the Gosper gun with the direction ``(dx, dy)`` (signs) its gliders fly."""
    out = []
    for b in _orientations(_library_board(GUN)):
        h, w = b.shape
        pad = 40
        space = np.zeros((h + 2 * pad, w + 2 * pad), dtype=np.uint8)
        space[pad : pad + h, pad : pad + w] = b * 2
        later = step(space, generations=90)
        later[pad - 2 : pad + h + 2, pad - 2 : pad + w + 2] = 0
        ys, xs = np.nonzero(later)
        # Sign of (mean position of the escaped gliders - centre of the gun), in integers.
        dx = 1 if 2 * int(xs.sum()) > len(xs) * (2 * pad + w) else -1
        dy = 1 if 2 * int(ys.sum()) > len(ys) * (2 * pad + h) else -1
        cells = tuple(sorted((int(x), int(y)) for y, x in zip(*np.nonzero(b), strict=True)))
        out.append((Figure(name=GUN, cells=cells, fw=w, fh=h, period=30), (dx, dy)))
    return tuple(out)


# --------------------------------------------------------------------------- boards


def board_side(number: int) -> int:
    """The longer side of level ``number``'s board: 40 at level 8 up to 300 at level 103.

    Non-decreasing in ``number``; a multiple of 10.
    """
    span = LAST_LEVEL - FIRST_LEVEL
    t = number - FIRST_LEVEL
    # 40 + 260 * (t/span + (t/span)^2) / 2, rounded to tens, in integers only.
    tens = (26 * (t * t + t * span) + span * span) // (2 * span * span)
    return 40 + 10 * tens


def board_size(number: int, rng: Rng) -> tuple[int, int]:
    """``(width, height)`` in cells; a quarter of the levels are rectangular (never 103)."""
    side = board_side(number)
    if number == LAST_LEVEL or side < 60 or not rng.chance(1, 4):
        return side, side
    short = max(40, 10 * ((side * rng.between(60, 80) + 500) // 1000))
    return (side, short) if rng.chance(1, 2) else (short, side)


# --------------------------------------------------------------------------- zones

#: Zone kinds: (key, English title, Russian title, English "where", Russian "where").
ZONE_KINDS: dict[str, tuple[str, str, str, str]] = {
    "left": ("Left Flank", "Левый фланг", "the left half", "левой половине"),
    "right": ("Right Flank", "Правый фланг", "the right half", "правой половине"),
    "top": ("High Ground", "Высота", "the top half", "верхней половине"),
    "bottom": ("Lowlands", "Низина", "the bottom half", "нижней половине"),
    "centre": ("Centre", "Центр", "the centre", "центре"),
    "corner_tl": ("North-West", "Северо-запад", "the top-left corner", "левом верхнем углу"),
    "corner_tr": ("North-East", "Северо-восток", "the top-right corner", "правом верхнем углу"),
    "corner_bl": ("South-West", "Юго-запад", "the bottom-left corner", "левом нижнем углу"),
    "corner_br": ("South-East", "Юго-восток", "the bottom-right corner", "правом нижнем углу"),
    "strip_v": (
        "Narrow Pass",
        "Узкий проход",
        "a narrow vertical strip",
        "узкой вертикальной полосе",
    ),
    "strip_h": ("Trench", "Траншея", "a narrow horizontal strip", "узкой горизонтальной полосе"),
    "rect": ("Outpost", "Аванпост", "a small rectangle", "небольшом прямоугольнике"),
}

_ZONE_GROUPS = ("half", "centre", "corner", "strip_v", "strip_h", "rect")


def make_zone(kind: str, width: int, height: int, rng: Rng) -> tuple[int, int, int, int]:
    """A half-open zone ``(x0, y0, x1, y1)`` of the given kind, never the whole board."""
    w, h = width, height
    if kind == "left":
        return (0, 0, w // 2, h)
    if kind == "right":
        return (w - w // 2, 0, w, h)
    if kind == "top":
        return (0, 0, w, h // 2)
    if kind == "bottom":
        return (0, h - h // 2, w, h)
    if kind == "centre":
        zw = max(6, w * rng.between(30, 50) // 100)
        zh = max(6, h * rng.between(30, 50) // 100)
        x0, y0 = (w - zw) // 2, (h - zh) // 2
        return (x0, y0, x0 + zw, y0 + zh)
    if kind.startswith("corner_"):
        zw = max(6, w * rng.between(30, 50) // 100)
        zh = max(6, h * rng.between(30, 50) // 100)
        x0 = 0 if kind[-1] == "l" else w - zw
        y0 = 0 if kind[-2] == "t" else h - zh
        return (x0, y0, x0 + zw, y0 + zh)
    if kind == "strip_v":
        zw = max(4, w * rng.between(6, 14) // 100)
        x0 = rng.choice((0, w - zw, (w - zw) // 2, rng.below(w - zw + 1)))
        return (x0, 0, x0 + zw, h)
    if kind == "strip_h":
        zh = max(4, h * rng.between(6, 14) // 100)
        y0 = rng.choice((0, h - zh, (h - zh) // 2, rng.below(h - zh + 1)))
        return (0, y0, w, y0 + zh)
    if kind == "rect":
        zw = max(6, w * rng.between(20, 45) // 100)
        zh = max(6, h * rng.between(20, 45) // 100)
        x0, y0 = rng.below(w - zw + 1), rng.below(h - zh + 1)
        return (x0, y0, x0 + zw, y0 + zh)
    raise ValueError(f"unknown zone kind {kind!r}")


def zone_kinds_schedule() -> dict[int, str]:
    """The zone kind of every generated level: shuffled rounds over all shape groups."""
    rng = Rng(SEED ^ 0x2D0E5)
    out: dict[int, str] = {}
    queue: list[str] = []
    for number in range(FIRST_LEVEL, LAST_LEVEL + 1):
        if not queue:
            queue = list(_ZONE_GROUPS)
            rng.shuffle(queue)
        group = queue.pop()
        if group == "half":
            kind = rng.choice(("left", "right", "top", "bottom"))
        elif group == "corner":
            kind = rng.choice(("corner_tl", "corner_tr", "corner_bl", "corner_br"))
        else:
            kind = group
        out[number] = kind
    return out


# --------------------------------------------------------------------------- enemies


def figure_pool(number: int) -> list[tuple[str, int]]:
    """``(name, weight)`` of the figures level ``number`` may use (more kinds later on)."""
    pool = [(name, 6) for name in STILL_LIFES]
    if number >= 12:
        pool += [(name, 5) for name in SMALL_OSCILLATORS]
    if number >= 30:
        pool += [(name, 2) for name in BIG_OSCILLATORS]
    return pool


def _gap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    """Chebyshev gap in cells between two half-open rectangles (0 when they touch/overlap)."""
    dx = max(b[0] - a[2], a[0] - b[2], -1) + 1
    dy = max(b[1] - a[3], a[1] - b[3], -1) + 1
    return max(dx, dy, 0)


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _contains(outer: tuple[int, int, int, int], inner: tuple[int, int, int, int]) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and inner[3] <= outer[3]
    )


@dataclass
class _Placed:
    figure: Figure
    x: int
    y: int

    @property
    def rect(self) -> tuple[int, int, int, int]:
        return (self.x, self.y, self.x + self.figure.fw, self.y + self.figure.fh)


def _try_place(
    fig: Figure,
    width: int,
    height: int,
    zone: tuple[int, int, int, int],
    placed: list[_Placed],
    partly: bool,
    rng: Rng,
    tries: int = 200,
    box: tuple[int, int, int, int] | None = None,
) -> _Placed | None:
    """A position for ``fig`` outside the zone (or partly in it) clear of the others, or None."""
    lo_x, lo_y = MARGIN, MARGIN
    hi_x, hi_y = width - MARGIN - fig.fw, height - MARGIN - fig.fh
    if box is not None:
        lo_x, lo_y = max(lo_x, box[0]), max(lo_y, box[1])
        hi_x, hi_y = min(hi_x, box[2] - fig.fw), min(hi_y, box[3] - fig.fh)
    if hi_x < lo_x or hi_y < lo_y:
        return None
    for _ in range(tries):
        x, y = rng.between(lo_x, hi_x), rng.between(lo_y, hi_y)
        rect = (x, y, x + fig.fw, y + fig.fh)
        if partly:
            if not _overlaps(rect, zone) or _contains(zone, rect):
                continue
        elif _overlaps(rect, zone):
            continue
        grown = (rect[0] - MARGIN, rect[1] - MARGIN, rect[2] + MARGIN, rect[3] + MARGIN)
        if any(_overlaps(grown, p.rect) for p in placed):
            continue
        return _Placed(fig, x, y)
    return None


def is_stable(board: np.ndarray) -> bool:
    """Whether ``board`` (hard edges) after 30 generations recurs within 15 more (never moves)."""
    settled = step(board, generations=SETTLE)
    cur = settled
    for _ in range(MAX_PERIOD):
        cur = step(cur)
        if np.array_equal(cur, settled):
            return True
    return False


def _figure_count(number: int, width: int, height: int, rng: Rng) -> int:
    """How many figures: grows with the level and the board area."""
    by_level = 2 + (number - FIRST_LEVEL) // 5
    by_area = width * height // 4000
    return max(1, min(by_level + rng.below(3), 3 + by_area))


def _summary(names: list[str], lang: int) -> str:
    """``"beehive ×3, block ×2"`` in first-seen order (``lang`` 0 English, 1 Russian)."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    parts = []
    for n, c in counts.items():
        label = FIGURE_NAMES[n][lang]
        parts.append(label if c == 1 else f"{label} ×{c}")
    return ", ".join(parts)


def generate_level(number: int, zone_kind: str) -> Level:
    """Level ``number`` (8..103) with a zone of ``zone_kind``.

    Raises:
        ValueError: ``number`` is outside 8..103.
        RuntimeError: the assembled enemy of a non-hopeless level is not stable (a bug).
    """
    if not FIRST_LEVEL <= number <= LAST_LEVEL:
        raise ValueError(f"generated levels are {FIRST_LEVEL}..{LAST_LEVEL}, got {number}")
    rng = level_rng(number)
    width, height = board_size(number, rng)
    zone = make_zone(zone_kind, width, height, rng)
    hopeless = number in HOPELESS
    placed: list[_Placed] = []

    if hopeless:
        # The gun fires away from the zone, from the half of the board farthest from it.
        want_x = 1 if zone[0] + zone[2] < width else -1
        want_y = 1 if zone[1] + zone[3] < height else -1
        variants = list(gun_variants())
        rng.shuffle(variants)
        for fig, (dx, dy) in variants:
            if (dx, dy) != (want_x, want_y):
                continue
            box = (
                width // 2 if want_x > 0 else 0,
                height // 3 if want_y > 0 else 0,
                width if want_x > 0 else width - width // 2,
                height if want_y > 0 else height - height // 3,
            )
            spot = _try_place(fig, width, height, zone, placed, False, rng, 400, box)
            if spot is None:
                spot = _try_place(fig, width, height, zone, placed, False, rng, 400)
            if spot is not None:
                placed.append(spot)
                break
        if not placed:
            raise RuntimeError(f"level {number}: no room for the glider gun")

    pool = figure_pool(number)
    target = _figure_count(number, width, height, rng)
    attempts = 0
    period = 1  # of the stable figures placed so far
    while len(placed) < target + (1 if hopeless else 0) and attempts < 4 * target + 8:
        attempts += 1
        name = rng.weighted(pool)
        fig = rng.choice(figure_variants(name))
        if math.lcm(period, fig.period) > MAX_PERIOD:
            continue  # e.g. a pentadecathlon (15) with a blinker (2): the board's period is 30
        partly = rng.chance(1, 5)
        spot = _try_place(fig, width, height, zone, placed, partly, rng)
        if spot is None and partly:
            spot = _try_place(fig, width, height, zone, placed, False, rng)
        if spot is not None:
            placed.append(spot)
            period = math.lcm(period, fig.period)

    cells: set[tuple[int, int]] = set()
    budget = 10
    for p in placed:
        cells.update((p.x + cx, p.y + cy) for cx, cy in p.figure.cells)
        if p.figure.name != GUN:
            budget += len(p.figure.cells) + 6 + _gap(zone, p.rect) // 6
    if hopeless:
        budget += 40
    budget = 5 * ((budget + 4) // 5)
    enemy = tuple(sorted(cells))

    names = [p.figure.name for p in placed]
    main = max(sorted(set(names) - {GUN}), key=names.count) if set(names) - {GUN} else GUN
    title_en, title_ru, where_en, where_ru = ZONE_KINDS[zone_kind]
    x0, y0, x1, y1 = zone
    if hopeless:
        name_en, name_ru = f"{title_en}: the Gun", f"{title_ru}: ружьё"
        extra_en = " Nearly hopeless on purpose: a Gosper glider gun keeps firing."
        extra_ru = (
            " Почти непроходимый уровень (так задумано): ружьё Госпера стреляет без остановки."
        )
    else:
        name_en = f"{title_en}: {FIGURE_NAMES[main][0]}"
        name_ru = f"{title_ru}: {FIGURE_NAMES[main][1]}"
        extra_en = extra_ru = ""
    hint_en = (
        f"Draw in {where_en} (columns {x0}..{x1 - 1}, rows {y0}..{y1 - 1}). "
        f"Enemy: {_summary(names, 0)}.{extra_en}"
    )
    hint_ru = (
        f"Рисуйте в {where_ru} (столбцы {x0}..{x1 - 1}, строки {y0}..{y1 - 1}). "
        f"Враг: {_summary(names, 1)}.{extra_ru}"
    )
    lv = Level(
        number=number,
        name_en=name_en,
        name_ru=name_ru,
        hint_en=hint_en,
        hint_ru=hint_ru,
        width=width,
        height=height,
        zone=zone,
        budget=budget,
        enemy=enemy,
        hopeless=hopeless,
    )
    if not hopeless and not is_stable(lv.enemy_board()):
        raise RuntimeError(f"level {number}: the generated enemy is not stable")
    return lv


def generate_levels() -> list[Level]:
    """Levels 8..103, freshly generated (a few seconds; needs the pattern library)."""
    kinds = zone_kinds_schedule()
    return [generate_level(n, kinds[n]) for n in range(FIRST_LEVEL, LAST_LEVEL + 1)]


def render_json(generated: Sequence[Level]) -> str:
    """The data file's text: a small header, then one level per line (diff-friendly)."""
    head = {
        "generator": "engine.campaign.generator",
        "version": GENERATOR_VERSION,
        "seed": SEED,
        "count": len(generated),
    }
    head_text = json.dumps(head, sort_keys=True, ensure_ascii=False)
    lines = [head_text[:-1] + ', "levels": [']
    for i, lv in enumerate(generated):
        sep = "," if i < len(generated) - 1 else ""
        lines.append(json.dumps(lv.to_dict(), ensure_ascii=False, separators=(",", ":")) + sep)
    lines.append("]}")
    return "\n".join(lines) + "\n"

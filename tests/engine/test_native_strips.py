"""The native kernel of the slot pools (engine/life/_native.c) against the numpy circuits
(engine/life/bitplan.py, engine/life/slots.py's MeasuredProgram) and against the
measures' definitions, generation after generation: the same planes (guard bands
cleared), the same live cells per slot and plane, the same fingerprints, and the words
it digests are stability's digests of the slots' words. Shapes cover one word per slot, a guard word (width a
multiple of 64), two rows, one to several strips (two strips among them), two and four
colours; every kernel copy this CPU can run (the baseline C and, on x86-64 with AVX2,
the AVX2 one: ``_native.INSTRUCTION_SETS``), not only the one chosen at import; the
kernel's SHA-256 against hashlib's."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from engine.life import slots
from engine.life.slots import NativeProgram, SlotPool

native = pytest.mark.skipif(slots._native is None, reason="the native kernel is not built")

SHAPES = [(300, 300), (7, 5), (64, 64), (10, 130), (33, 127), (2, 70)]
COLOURS = [(1, 2), (1, 2, 3, 4)]
#: The kernel copies this CPU can run (best last: the one chosen at import).
COPIES = slots._native.INSTRUCTION_SETS if slots._native is not None else ("numpy",)


@pytest.fixture(params=COPIES)
def kernel_copy(request):
    """Run the native pools on one copy of the kernel, then on the best again."""
    if slots._native is None:
        yield request.param
        return
    slots._native.use_instruction_set(request.param)
    try:
        yield request.param
    finally:
        slots._native.use_instruction_set(slots._native.INSTRUCTION_SET)


def random_board(rng: np.random.Generator, h: int, w: int, colours: tuple[int, ...]) -> np.ndarray:
    values = np.array((0, *colours), dtype=np.uint8)
    board = values[rng.integers(1, len(colours) + 1, size=(h, w))]
    return np.where(rng.random((h, w)) < 0.4, board, 0).astype(np.uint8)


def filled_pools(h: int, w: int, colours: tuple[int, ...], games: int, seed: int = 1):
    """The same random boards in a numpy pool and a native pool."""
    rng = np.random.default_rng(seed)
    pools = SlotPool(h, w, colours, native=False), SlotPool(h, w, colours, native=True)
    for _ in range(games):
        board = random_board(rng, h, w, colours)
        for pool in pools:
            pool.put_words([pool.take()], pool.board_words(board)[None])
    return pools


def exact_measures(pool: SlotPool) -> tuple[np.ndarray, np.ndarray]:
    """Live cells per slot and plane, and fingerprints, from each slot's words
    (:meth:`SlotPool.fingerprint`, the definition)."""
    words = pool.words(range(pool.size))
    counts = np.bitwise_count(words).sum(axis=(2, 3), dtype=np.int64)
    fps = np.array([pool.fingerprint(w) for w in words], dtype=np.uint64)
    return counts, fps


@native
@pytest.mark.parametrize("colours", COLOURS)
@pytest.mark.parametrize(("h", "w"), SHAPES)
def test_native_generations_equal_the_numpy_circuits(h, w, colours, kernel_copy):
    games = 2 * slots._geometry(w)[1] + 3  # three strips, the last one partly empty
    numpy_pool, native_pool = filled_pools(h, w, colours, games)
    assert isinstance(native_pool.program, NativeProgram)
    for _ in range(6):
        numpy_pool.program.run()
        native_pool.program.run()
        for p in range(numpy_pool.n_planes):
            assert np.array_equal(native_pool.data(p), numpy_pool.data(p))
        counts, fps = native_pool.measure()
        exact_counts, exact_fps = exact_measures(native_pool)
        assert np.array_equal(counts, exact_counts)
        assert np.array_equal(fps, exact_fps)
        numpy_counts, numpy_fps = numpy_pool.measure()
        assert np.array_equal(numpy_counts, exact_counts)
        assert np.array_equal(numpy_fps, exact_fps)
    assert native_pool.words(range(games)).any()  # the boards did not all die out


@native
@pytest.mark.parametrize("colours", COLOURS)
def test_measures_of_a_pool_of_two_strips(colours, kernel_copy):
    """Two strips: the numpy circuits' bands start at each strip (evened-out bands would
    start the second one at its ghost row and miss its last row)."""
    h, w = 40, 300
    numpy_pool, native_pool = filled_pools(h, w, colours, slots._geometry(w)[1] + 1, seed=7)
    assert numpy_pool.strips == native_pool.strips == 2
    numpy_pool.program.run()
    native_pool.program.run()
    exact_counts, exact_fps = exact_measures(numpy_pool)
    for pool in (numpy_pool, native_pool):
        counts, fps = pool.measure()
        assert np.array_equal(counts, exact_counts)
        assert np.array_equal(fps, exact_fps)


@native
@pytest.mark.parametrize("colours", COLOURS)
@pytest.mark.parametrize("w", [200, 128])
def test_the_boards_digested_during_a_generation_are_digested_as_stability_does(colours, w, kernel_copy):
    """The kernel's digests (SHA-256 in C while the strip is in cache) are
    engine.life.stability's of the slots' new words (a width of whole words: a guard word
    the digest leaves out)."""
    h = 30
    _, pool = filled_pools(h, w, colours, 60, seed=3)
    program = pool.program
    wanted = [0, 3, 4, pool.m, pool.m + 5]  # several in one strip, in two strips
    program.digest_slots = {}
    for s in wanted:
        program.digest_slots.setdefault(s // pool.m, []).append(s)
    program.run()
    assert set(program.digests) == set(wanted)
    assert program.digests == dict(zip(wanted, pool.digests(wanted), strict=True))
    assert np.array_equal(pool.words(wanted), np.stack([pool.words([s])[0] for s in wanted]))


@native
def test_the_board_of_a_slot_is_the_numpy_one():
    rng = np.random.default_rng(5)
    for colours in [(1, 2), (1, 2, 3, 4)]:
        for h, w in [(300, 300), (3, 8), (2, 65), (1, 1), (5, 128)]:
            board = random_board(rng, h, w, colours)
            native = SlotPool(h, w, colours, native=True)
            numpy_pool = SlotPool(h, w, colours, native=False)
            words = native.board_words(board)
            assert np.array_equal(native.board(words), board)
            assert np.array_equal(numpy_pool.board(words), board)


@native
def test_into_other_planes_equals_in_place():
    _, pool = filled_pools(40, 100, (1, 2), 30, seed=11)
    program = pool.program
    before = tuple(p.copy() for p in program.planes)
    into = tuple(np.zeros_like(p) for p in before)
    counts, fps = program.counts.copy(), program.fps.copy()
    slots._native.generation(
        before, into, pool.strips, pool.h, pool.m, pool.nwb, program._mask,
        program._keys, program._column_keys, counts, fps,
    )
    program.run()
    for new, old in zip(program.planes, into, strict=True):
        assert np.array_equal(new, old)
    assert np.array_equal(counts, program.counts) and np.array_equal(fps, program.fps)


@native
def test_sizes_that_do_not_match_are_refused():
    pool = SlotPool(10, 10, (1, 2), native=True, strips=1)
    program = pool.program
    other = tuple(np.zeros_like(p) for p in program.planes)
    with pytest.raises(ValueError, match="plane must hold"):
        slots._native.generation(
            (program.planes[0][:-1], program.planes[1]), other, 1, 10,
            pool.m, pool.nwb, 0, program._keys, program._column_keys, program.counts, program.fps,
        )
    with pytest.raises(ValueError, match="in place"):
        slots._native.generation(
            tuple(program.planes), (program.planes[0], other[1]), 1, 10, pool.m, pool.nwb, 0,
            program._keys, program._column_keys, program.counts, program.fps,
        )
    with pytest.raises(ValueError, match="out of range"):
        pool.words([pool.size])
    with pytest.raises(ValueError, match="sorted"):
        slots._native.generation(
            tuple(program.planes), other, 1, 10, pool.m, pool.nwb, 0,
            program._keys, program._column_keys, program.counts, program.fps, True,
            np.array([2, 1], dtype=np.int64), np.zeros((2, 16), dtype=np.uint8), 10,
        )
    with pytest.raises(ValueError, match="width"):
        slots._native.generation(
            tuple(program.planes), other, 1, 10, pool.m, pool.nwb, 0,
            program._keys, program._column_keys, program.counts, program.fps, True,
            np.array([1, 2], dtype=np.int64), np.zeros((2, 16), dtype=np.uint8), 65 * pool.nwb,
        )


@native
def test_the_kernels_sha256_is_hashlibs():
    rng = np.random.default_rng(2)
    for n in [*range(130), 1000, 4096, 24_000, 100_001]:
        data = rng.integers(0, 256, size=n, dtype=np.uint8).tobytes()
        assert slots._native.sha256(data) == hashlib.sha256(data).digest()


def test_the_native_kernel_is_built_where_a_c_compiler_is():
    """The install builds the kernel as an optional extension (pyproject.toml): without a
    compiler it goes on with the numpy circuits. Where a compiler is, a build failure must
    not pass unnoticed as that fallback."""
    import shutil
    import sysconfig

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}): the numpy circuits are the kernel")
    assert slots._native is not None, "engine/life/_native.c did not build: pip install -e . -v shows why"
    assert slots._native.INSTRUCTION_SET in ("avx2", "baseline")


@native
def test_a_kernel_copy_is_chosen_among_those_the_cpu_runs():
    """The best copy is chosen at import; another can be chosen by name (tests and
    benchmarks compare them); a name this CPU cannot run is refused and changes nothing."""
    names = slots._native.INSTRUCTION_SETS
    assert names[0] == "baseline" and set(names) <= {"baseline", "avx2"}
    assert slots._native.INSTRUCTION_SET == names[-1] == slots._native.current_instruction_set()
    try:
        slots._native.use_instruction_set("baseline")
        assert slots._native.current_instruction_set() == "baseline"
        with pytest.raises(ValueError, match="no kernel copy named 'avx9'"):
            slots._native.use_instruction_set("avx9")
        assert slots._native.current_instruction_set() == "baseline"
    finally:
        slots._native.use_instruction_set(names[-1])
    assert slots._native.current_instruction_set() == names[-1]

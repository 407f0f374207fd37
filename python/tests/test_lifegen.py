"""Tests of the lifegen Python package: run with `pytest python/tests` after `pip install ./python`."""

from pathlib import Path

import numpy as np
import pytest

import lifegen

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"

GLIDER = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.uint8)


def glider_universe(width=16, height=16, at=(2, 3)):
    cells = np.zeros((height, width), dtype=np.uint8)
    x, y = at
    cells[y : y + 3, x : x + 3] = GLIDER
    return lifegen.Universe.from_numpy(cells)


@pytest.mark.parametrize("backend", ["cpu", "reference", "auto"])
def test_glider_moves_one_cell_diagonally_in_four_generations(backend):
    start = glider_universe()
    after = lifegen.run(start, 4, backend=backend)
    assert after == start.translated(1, 1)
    assert after != start
    assert after.population == 5
    assert after.generation == 4
    assert after.rule == "B3/S23"
    # The input is left as it was.
    assert start.generation == 0
    assert np.array_equal(start.to_numpy()[3:6, 2:5], GLIDER)


def test_a_numpy_array_runs_as_a_universe():
    cells = glider_universe().to_numpy()
    after = lifegen.run(cells, 8)
    expected = np.roll(cells, (2, 2), axis=(0, 1))
    assert np.array_equal(after.to_numpy(), expected)


@pytest.mark.parametrize(
    "rule,size",
    [
        ("B3/S23", (200, 70)),
        ("B36/S23", (64, 64)),
        ("B2/S", (65, 33)),
        ("B2-a/S12", (67, 45)),
        ("B2/S34H", (64, 40)),
        ("MAPABCDEF", (100, 9)),
    ],
)
def test_every_backend_here_agrees_on_a_random_torus(rule, size):
    soup = lifegen.random(*size, density=0.4, seed=7)
    results = {b: lifegen.run(soup, 37, rule=rule, backend=b) for b in ("cpu", "reference", "auto")}
    assert results["cpu"] == results["reference"]
    assert results["auto"] == results["reference"]
    assert results["cpu"].population != soup.population


def test_larger_than_life_runs_the_same_on_cpu_and_reference():
    disc = lifegen.load(DATA / "ltl_disc.rle", size=(48, 40))
    assert disc.rule == "R5,C0,M1,S34..58,B34..45,NM"
    cpu = lifegen.run(disc, 12, backend="cpu")
    reference = lifegen.run(disc, 12, backend="reference")
    assert cpu == reference
    assert cpu.population > 0
    assert cpu != disc


def test_random_is_the_command_lines_soup():
    a = lifegen.random(100, 50, density=0.3, seed=42)
    assert a == lifegen.random(100, 50, density=0.3, seed=42)
    assert a != lifegen.random(100, 50, density=0.3, seed=43)
    fraction = a.population / (100 * 50)
    assert 0.25 < fraction < 0.35
    half = lifegen.random(64, 64)
    assert 0.45 < half.population / 4096 < 0.55


def test_numpy_round_trips_and_bits_past_the_width_are_zero():
    rng = np.random.default_rng(3)
    cells = (rng.random((37, 130)) < 0.5).astype(np.uint8)
    u = lifegen.Universe.from_numpy(cells)
    assert (u.width, u.height, u.shape) == (130, 37, (37, 130))
    out = u.to_numpy()
    assert out.dtype == np.uint8 and out.shape == (37, 130)
    assert np.array_equal(out, cells)
    assert u.population == int(cells.sum())

    words = u.packed()
    assert words.dtype == np.uint64 and words.shape == (37, 3)
    # Cell x in bit x % 64 of word x / 64; bits past the width (130 = 2 * 64 + 2) zero.
    assert np.all(words[:, 2] >> np.uint64(2) == 0)
    bits = np.unpackbits(words.view(np.uint8).reshape(37, 24), axis=1, bitorder="little")
    assert np.array_equal(bits[:, :130], cells)
    again = lifegen.Universe.from_packed(words, 130)
    assert again == u
    assert np.array_equal(again.to_numpy(), cells)

    # bool arrays and nonzero values count as alive.
    assert lifegen.Universe.from_numpy(cells.astype(bool)) == u
    assert lifegen.Universe.from_numpy(cells * 7) == u


def test_packed_rows_with_bits_past_the_width_are_refused():
    words = np.zeros((4, 1), dtype=np.uint64)
    words[2, 0] = np.uint64(1) << np.uint64(10)
    with pytest.raises(ValueError, match="row 2 has bits set past the width 10"):
        lifegen.Universe.from_packed(words, 10)
    with pytest.raises(ValueError, match="takes 2 words a row"):
        lifegen.Universe.from_packed(np.zeros((4, 1), dtype=np.uint64), 100)


def test_rle_and_macrocell_files_load():
    gun = lifegen.load(DATA / "gosper_glider_gun.rle")
    assert (gun.width, gun.height, gun.population, gun.rule) == (36, 9, 36, "B3/S23")
    big = lifegen.load(DATA / "gosper_glider_gun.rle", size=(100, 80))
    assert big.shape == (80, 100)
    assert np.array_equal(big.to_numpy()[:9, :36], gun.to_numpy())
    # A period-30 gun adds a glider every 30 generations.
    assert lifegen.run(big, 120).population > gun.population

    mc = lifegen.load(DATA / "glider_and_block_level20.mc")
    assert mc.population == 9
    assert mc.rule == "B3/S23"


def test_save_and_load_round_trip(tmp_path):
    soup = lifegen.random(90, 40, density=0.3, seed=5, rule="B36/S23")
    for name in ["soup.rle", "soup.mc"]:
        soup_path = tmp_path / name
        lifegen.save(soup_path, soup)
        back = lifegen.load(soup_path)
        assert back == soup, name
        # The writers record the torus in the rule, which sizes the universe when read back.
        assert back.rule == "B36/S23:T90,40"
    lifegen.save(tmp_path / "soup.png", soup)
    assert (tmp_path / "soup.png").read_bytes()[:4] == b"\x89PNG"


def test_universe_files_keep_cells_rule_and_generation(tmp_path):
    soup = lifegen.random(200, 30, density=0.5, seed=9)
    later = lifegen.run(soup, 10, rule="B36/S23")
    path = tmp_path / "later.npy"
    lifegen.save(path, later)
    back = lifegen.load(path)
    assert back == later
    assert (back.rule, back.generation) == ("B36/S23", 10)
    # numpy reads the rows as they are.
    assert np.array_equal(np.load(path), later.packed())
    # And a run from it goes on counting.
    assert lifegen.run(back, 5).generation == 15
    with pytest.raises(ValueError, match="own size"):
        lifegen.load(path, size=(10, 10))


@pytest.mark.parametrize("width,height", [(67, 23), (1, 9), (130, 5)])
def test_plain_numpy_arrays_load_and_run_as_their_cells(tmp_path, width, height):
    rng = np.random.default_rng(width)
    cells = (rng.random((height, width)) < 0.4).astype(np.uint8)
    expected = lifegen.run(lifegen.Universe.from_numpy(cells), 11, backend="reference")
    arrays = {
        "bool_c.npy": cells.astype(bool),
        "uint8_c.npy": cells,
        "bool_f.npy": np.asfortranarray(cells.astype(bool)),
        "uint8_f.npy": np.asfortranarray(cells),
    }
    for name, array in arrays.items():
        path = tmp_path / name
        np.save(path, array)
        if name.endswith("_f.npy") and width > 1:
            assert b"'fortran_order': True" in path.read_bytes()[:128]
        u = lifegen.load(path)
        # A plain array carries no rule and no generation.
        assert (u.width, u.height, u.rule, u.generation) == (width, height, None, 0), name
        assert np.array_equal(u.to_numpy(), cells), name
        assert lifegen.run(u, 11, backend="cpu") == expected, name
    # In a larger universe, at its corner.
    big = lifegen.load(tmp_path / "bool_f.npy", size=(width + 10, height + 3))
    assert np.array_equal(big.to_numpy()[:height, :width], cells)
    assert big.population == int(cells.sum())
    # Packed rows (uint64, as Universe.packed() gives them): the width from size, else 64 cells
    # a word.
    words = lifegen.Universe.from_numpy(cells).packed()
    for name, array in {"packed_c.npy": words, "packed_f.npy": np.asfortranarray(words)}.items():
        np.save(tmp_path / name, array)
        u = lifegen.load(tmp_path / name, size=(width, height))
        assert np.array_equal(u.to_numpy(), cells), name
        wide = lifegen.load(tmp_path / name)
        assert wide.shape == (height, 64 * words.shape[1])
        assert np.array_equal(wide.to_numpy()[:, :width], cells), name
    # A run into a universe file from an array's path, as `lifegen run --input FILE.npy`.
    output = tmp_path / "out.npy"
    done = lifegen.run_file(tmp_path / "uint8_f.npy", output, 11, backend="cpu")
    assert (done["generation"], done["population"]) == (11, expected.population)
    assert lifegen.load(output) == expected
    assert lifegen.run_file(tmp_path / "uint8_f.npy", output, 11, backend="cpu")["gens"] == 0


def test_plain_arrays_lifegen_does_not_read_raise_value_error(tmp_path):
    accepted = "lifegen reads 2-D arrays of bool, uint8 \\(0 or 1\\) or little-endian uint64"
    two = np.zeros((4, 6), dtype=np.uint8)
    two[2, 3] = 2
    np.save(tmp_path / "two.npy", two)
    with pytest.raises(ValueError, match=r"two\.npy: element \[2, 3\] of its uint8 array is 2"):
        lifegen.load(tmp_path / "two.npy")
    np.save(tmp_path / "two_f.npy", np.asfortranarray(np.vstack([two, two * 0])))
    with pytest.raises(ValueError, match=r"element \[2, 3\] of its uint8 array is 2"):
        lifegen.load(tmp_path / "two_f.npy")
    for name, array, found in [
        ("int.npy", np.zeros((2, 2), np.int64), r"an array of int64 \('<i8'\), shape \(2, 2\)"),
        ("float.npy", np.zeros((2, 2)), r"an array of float64"),
        ("big.npy", np.zeros((2, 2), ">u8"), r"an array of big-endian uint64 \('>u8'\)"),
        ("flat.npy", np.zeros(5, bool), r"a 1-D array of bool, shape \(5,\)"),
        ("cube.npy", np.zeros((2, 2, 2), np.uint8), r"a 3-D array of uint8"),
        ("record.npy", np.zeros((2, 2), "i4,u1"), r"an array of a structured dtype"),
    ]:
        np.save(tmp_path / name, array)
        with pytest.raises(ValueError, match=found):
            lifegen.load(tmp_path / name)
        with pytest.raises(ValueError, match=accepted):
            lifegen.run_file(tmp_path / name, tmp_path / "never.npy", 1)
    np.save(tmp_path / "objects.npy", np.array([[None, 1]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"Python objects \('\|O'\)"):
        lifegen.load(tmp_path / "objects.npy")
    words = np.zeros((3, 1), np.uint64)
    words[1, 0] = np.uint64(1) << np.uint64(40)
    np.save(tmp_path / "packed.npy", words)
    with pytest.raises(ValueError, match="row 1 of its uint64 array has a live cell at x = 40"):
        lifegen.load(tmp_path / "packed.npy", size=(20, 3))
    with pytest.raises(ValueError, match="more than the 64 a row"):
        lifegen.load(tmp_path / "packed.npy", size=(65, 3))
    with pytest.raises(ValueError, match="larger than the 5x5 universe"):
        lifegen.load(tmp_path / "two.npy", size=(5, 5))
    with pytest.raises(FileNotFoundError, match="no-such.npy"):
        lifegen.load(tmp_path / "no-such.npy")
    assert not (tmp_path / "never.npy").exists()


def test_sides_below_twice_the_radius_are_raised_as_golly_raises_them(tmp_path):
    r2 = "R2,C0,M0,S3..5,B3..4,NN"
    soup = lifegen.random(64, 3, seed=4, rule=r2)
    assert soup.shape == (4, 64)
    assert soup == lifegen.random(64, 4, seed=4)
    assert lifegen.run(soup, 9, backend="cpu") == lifegen.run(soup, 9, backend="reference")
    assert lifegen.Universe(10, 1, rule=r2).shape == (4, 10)
    line = tmp_path / "line.rle"
    line.write_text(f"x = 3, y = 1, rule = {r2}\n3o!\n")
    assert lifegen.load(line).shape == (4, 4)
    assert lifegen.load(line, size=(64, 3)).shape == (4, 64)
    # Life-like rules keep their sides, as Golly does.
    assert lifegen.random(5, 1, rule="B3/S23").shape == (1, 5)
    # A universe already made is not raised: one too small for the rule is refused.
    with pytest.raises(ValueError, match="a 64x3 universe cannot run under R2,C0,M0,S3..5"):
        lifegen.run(lifegen.random(64, 3), 1, rule=r2)
    with pytest.raises(ValueError, match="at least 4x4"):
        lifegen.run(np.zeros((3, 3), np.uint8), 1, rule=r2)


def test_a_universe_file_runs_out_of_core_and_resumes(tmp_path):
    soup = lifegen.random(192, 300, density=0.4, seed=5, rule="B36/S23")
    start = tmp_path / "start.npy"
    lifegen.save(start, soup)
    output = tmp_path / "out.npy"
    # 12000 bytes hold a few dozen of its 24-word rows: it runs in bands through the file.
    done = lifegen.run_file(start, output, 17, backend="cpu", host_memory=12_000, gens_per_pass=5)
    expected = lifegen.run(soup, 17)
    assert "band" in done["layout"]
    assert (done["generation"], done["gens"], done["passes"]) == (17, 17, 4)
    assert done["population"] == expected.population
    assert lifegen.load(output) == expected
    # The same call again finds the run finished.
    again = lifegen.run_file(start, output, 17, backend="cpu", host_memory=12_000)
    assert (again["gens"], again["population"]) == (0, expected.population)
    # A universe in memory, held whole.
    whole = lifegen.run_file(soup, tmp_path / "whole.npy", 17, backend="cpu")
    assert whole["layout"] == "held whole"
    assert lifegen.load(tmp_path / "whole.npy") == expected
    with pytest.raises(ValueError, match="memory budget"):
        lifegen.run_file(start, tmp_path / "small.npy", 3, backend="cpu", host_memory=100)
    with pytest.raises(ValueError, match="GPU memory limit"):
        lifegen.run_file(start, tmp_path / "cpu.npy", 3, backend="cpu", gpu_memory=1 << 30)


def test_a_universe_file_runs_on_a_bounded_plane_in_bands(tmp_path):
    soup = lifegen.random(192, 300, density=0.4, seed=5)
    start = tmp_path / "start.npy"
    lifegen.save(start, soup)
    output = tmp_path / "plane.npy"
    rule = "B36/S23:P192,300"
    done = lifegen.run_file(start, output, 17, rule=rule, backend="cpu", host_memory=12_000)
    expected = lifegen.run(soup, 17, rule=rule)
    assert "band" in done["layout"]
    assert done["population"] == expected.population
    # The file records the rule with its suffix: read back, it is the same bounded plane.
    assert lifegen.load(output) == expected
    with pytest.raises(ValueError, match="hold the universe whole"):
        lifegen.run_file(start, tmp_path / "c.npy", 3, rule="B3/S23:C192,300", host_memory=12_000)


def test_progress_is_called_with_increasing_counts_ending_at_the_total():
    calls = []
    lifegen.run(
        lifegen.random(256, 256, seed=2),
        3000,
        backend="cpu",
        progress=lambda done, total: calls.append((done, total)),
    )
    assert len(calls) > 1, calls
    assert all(total == 3000 for _, total in calls)
    done = [d for d, _ in calls]
    assert done == sorted(set(done))
    assert done[-1] == 3000


def test_an_exception_in_progress_stops_the_run():
    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop(done)

    with pytest.raises(Stop):
        lifegen.run(lifegen.random(64, 64), 100000, progress=stop)


def test_bad_input_raises_value_error_with_the_command_lines_message():
    u = lifegen.random(32, 32)
    with pytest.raises(ValueError, match="B3/S9"):
        lifegen.run(u, 1, rule="B3/S9")
    with pytest.raises(ValueError, match='unknown backend "warp"; use auto, gpu, cpu or reference'):
        lifegen.run(u, 1, backend="warp")
    with pytest.raises(ValueError, match="--threads must be at least 1"):
        lifegen.run(u, 1, threads=0)
    with pytest.raises(ValueError, match="disagrees with the rule's torus :T64,64"):
        lifegen.run(u, 1, rule="B3/S23:T64,64")
    with pytest.raises(ValueError, match="density 1.5 is outside 0..=1"):
        lifegen.random(8, 8, density=1.5)
    with pytest.raises(ValueError, match="has a zero side"):
        lifegen.Universe(0, 8)
    with pytest.raises(TypeError):
        lifegen.run([[1, 0], [0, 1]], 1)
    with pytest.raises(FileNotFoundError, match="cannot read .*no-such.rle"):
        lifegen.load("no-such.rle")


def test_a_malformed_rle_file_is_a_value_error(tmp_path):
    bad = tmp_path / "bad.rle"
    bad.write_text("x = 3, y = 3, rule = B3/S23\nbo$2bo$3q!\n")
    with pytest.raises(ValueError, match=r"cannot read .*bad\.rle: RLE line 2"):
        lifegen.load(bad)
    small = tmp_path / "big.rle"
    small.write_text("x = 30, y = 3\n30o!\n")
    with pytest.raises(ValueError, match="larger than the 10x10 universe"):
        lifegen.load(small, size=(10, 10))


def test_the_gpu_backend_without_a_gpu_is_a_runtime_error_not_a_crash():
    try:
        lifegen.run(lifegen.random(64, 64), 4, backend="gpu")
    except RuntimeError as e:
        assert "\n" not in str(e)
    # Else there is a GPU and the run worked.


def test_count_gives_the_command_lines_rows():
    rows = lifegen.count("B3/S23")
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    keys = list(rows[0])
    assert keys[:4] == ["technique", "basis", "word_bits", "cells_per_word"]
    assert "logic_ops_per_cell_gen" in keys and "sass_mix_per_cell_gen" in keys
    by_name = {r["technique"]: r for r in rows}
    blog = by_name["blog, 10 LOP3 by SAT"]
    assert blog["published_ops"] == 10
    assert blog["lop3_per_word"] == 10
    assert blog["sass_instructions_per_cell_gen"] is None
    assert any(name.startswith("lifegen GPU") for name in by_name)
    assert any(name.startswith("lifegen CPU") for name in by_name)
    # Larger-than-Life has its own rows.
    ltl = lifegen.count("R5,C0,M1,S34..58,B34..45,NM")
    assert any(r["technique"].startswith("CAT") for r in ltl)
    # A rule given by its 3x3 table: its stored pair shape (kernels_out/pairs/), as the CLI counts it.
    (hensel,) = lifegen.count("B2-a/S12")
    assert hensel["technique"].startswith("lifegen stream kernel")
    assert "pair feature" in hensel["technique"]
    assert hensel["lop3_per_word"] == 13
    with pytest.raises(ValueError):
        lifegen.count("nonsense")


def test_count_matches_lifegen_count_json():
    import json

    snapshot = (REPO / "tests" / "snapshots" / "count__count_b3s23_json.snap").read_text()
    body = snapshot.split("---", 2)[2]
    assert json.loads(body) == lifegen.count("B3/S23")


def test_search_proves_the_blog_shape_needs_four_luts():
    result = lifegen.search("B3/S23", shape="blog", basis="lut3", timeout=60)
    assert result["gates"] == 4
    assert result["proven_optimal"] is True
    assert result["fixed_ops_per_word"] == 6 and result["ops_per_word"] == 10
    answers = [(a["gates"], a["answer"]) for a in result["attempts"]]
    assert (3, "UNSAT") in answers and (4, "SAT") in answers
    assert result["network"].count("lop3.b32") == 4
    assert result["header"].startswith("rule B3/S23, shape blog, basis lut3")


def test_search_refuses_bad_arguments():
    with pytest.raises(ValueError, match="life-like"):
        lifegen.search("R2,C2,M0,S1..2,B1..1,NM")
    with pytest.raises(ValueError, match="unknown shape"):
        lifegen.search(shape="hexagonal")
    with pytest.raises(ValueError, match="--timeout must be a positive number"):
        lifegen.search(timeout=0)
    with pytest.raises(ValueError, match="--min 5 is above --max 2"):
        lifegen.search(min=5, max=2)


def test_search_says_when_the_budget_runs_out():
    result = lifegen.search(shape="monolithic", min=8, max=8, timeout=1)
    assert result["attempts"][-1]["answer"] == "timeout"
    assert result["gates"] == 12
    assert result["proven_optimal"] is False


def test_ctrl_c_stops_a_long_run_between_slices():
    import signal
    import subprocess
    import sys
    import time

    # A background job of a shell starts with SIGINT ignored, and Python then leaves it
    # ignored: the child takes Python's own handler, as an interactive session has it.
    script = (
        "import lifegen, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    lifegen.run(lifegen.random(256, 256), 10**12, backend='cpu')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "started\n"
    time.sleep(1)
    child.send_signal(signal.SIGINT)
    try:
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    assert out == "interrupted\n"
    assert child.returncode == 0


def test_the_readme_tour_runs(monkeypatch, capsys):
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Python\n", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "lifegen.Universe(120x80, population 36, rule B3/S23, generation 0)" in out
    assert "600/600 generations" in out
    assert "4 gates, proven optimal" in out


def test_generations_states_go_in_and_out_as_numpy():
    # Brian's Brain: a live pair is born on above and below, and starts dying.
    cells = np.zeros((5, 6), dtype=np.uint8)
    cells[2, 2:4] = 1
    start = lifegen.Universe.from_numpy(cells, rule="/2/3")
    assert start.states == 3
    after = lifegen.run(start, 1, backend="cpu")
    expected = np.zeros((5, 6), dtype=np.uint8)
    expected[1, 2:4] = 1
    expected[3, 2:4] = 1
    expected[2, 2:4] = 2
    assert (after.to_numpy() == expected).all()
    assert after.state(2, 2) == 2
    assert after.population == 6


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_generations_runs_match_the_reference(backend):
    rng = np.random.default_rng(5)
    cells = rng.integers(0, 4, size=(37, 70), dtype=np.uint8)
    want = lifegen.run(cells, 9, rule="345/2/4", backend="reference")
    got = lifegen.run(cells, 9, rule="345/2/4", backend=backend)
    assert got == want
    assert set(np.unique(got.to_numpy())) <= {0, 1, 2, 3}


def test_generations_states_out_of_range_and_two_state_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="state 3"):
        lifegen.Universe.from_numpy(np.full((2, 2), 3, dtype=np.uint8), rule="/2/3")
    brain = lifegen.random(16, 16, rule="/2/3")
    with pytest.raises(ValueError, match="two-state"):
        lifegen.save(tmp_path / "brain.npy", brain)
    lifegen.save(tmp_path / "brain.rle", lifegen.run(brain, 3))
    back = lifegen.load(tmp_path / "brain.rle")
    assert back.states == 3 and back == lifegen.run(brain, 3)


@pytest.mark.parametrize("backend", ["cpu", "reference", "auto"])
def test_a_glider_on_a_bounded_plane_ends_as_a_block(backend):
    # Golly's :P: cells past the edges are dead, so the glider settles as a block in the corner;
    # on the torus it flies on.
    start = glider_universe(12, 12, at=(4, 4))
    plane = lifegen.run(start, 60, rule="B3/S23:P12,12", backend=backend)
    assert plane.population == 4
    assert plane.to_numpy()[10:12, 10:12].sum() == 4
    torus = lifegen.run(start, 60, rule="B3/S23:T12,12", backend=backend)
    assert torus.population == 5


ACORN_RLE = "#CXRLE Pos=-3,-1\nx = 7, y = 3, rule = B3/S23\nbo5b$3bo3b$2o2b3o!\n"


@pytest.mark.parametrize("algo", ["auto", "hashlife", "tiles", "dense"])
def test_run_plane_gives_golly_cells_at_golly_coordinates(tmp_path, algo):
    # A glider from (0, 0) goes down and right one cell every four generations, forever: no
    # torus wraps it back.
    path = tmp_path / "glider.rle"
    path.write_text("x = 3, y = 3, rule = B3/S23\nbo$2bo$3o!\n")
    done = lifegen.run_plane(str(path), 400, algo=algo)
    assert (done["x"], done["y"]) == (100, 100)
    assert done["generation"] == 400 and done["population"] == 5
    assert np.array_equal(done["cells"].to_numpy(), GLIDER)
    # An array starts with its top-left cell at (0, 0).
    from_array = lifegen.run_plane(GLIDER, 400, algo=algo)
    assert (from_array["x"], from_array["y"]) == (100, 100)


def test_run_plane_engines_agree_and_count_on_from_the_files_generation(tmp_path):
    path = tmp_path / "acorn.rle"
    path.write_text(ACORN_RLE)
    runs = [lifegen.run_plane(path, 1000, algo=algo) for algo in ["hashlife", "tiles", "dense"]]
    for run in runs:
        assert run["population"] == runs[0]["population"]
        assert (run["x"], run["y"]) == (runs[0]["x"], runs[0]["y"])
        assert np.array_equal(run["cells"].to_numpy(), runs[0]["cells"].to_numpy())
    assert "HashLife" in runs[0]["engine"]
    later = tmp_path / "later.rle"
    later.write_text(ACORN_RLE.replace("Pos=-3,-1", "Pos=-3,-1 Gen=500"))
    assert lifegen.run_plane(later, 1000)["generation"] == 1500


def test_run_plane_refuses_bounded_grids_and_births_from_nothing(tmp_path):
    with pytest.raises(ValueError, match="bounded grid"):
        lifegen.run_plane(GLIDER, 4, rule="B3/S23:T16,16")
    # B0 without S8 runs on the tiles as Golly holds it (the complement at odd generations);
    # HashLife refuses it, as Golly's does, and Larger than Life's B0 is not emulated.
    odd = lifegen.run_plane(GLIDER, 3, rule="B03/S23")
    assert odd["generation"] == 3 and "tiles" in odd["engine"]
    with pytest.raises(ValueError, match="--algo tiles runs it"):
        lifegen.run_plane(GLIDER, 4, rule="B03/S23", algo="hashlife")
    with pytest.raises(ValueError, match="B0"):
        lifegen.run_plane(GLIDER, 4, rule="R2,C0,M0,S1..3,B0..2,NM")
    with pytest.raises(ValueError, match="engine of the plane"):
        lifegen.run_plane(GLIDER, 4, algo="quick")
    empty = lifegen.run_plane(np.zeros((4, 4), dtype=np.uint8), 10)
    assert empty["cells"] is None and empty["population"] == 0

//! Plain NumPy arrays as `lifegen run --input FILE.npy`: bool, uint8 and packed uint64 arrays in
//! C and Fortran order, files of format 1.0, 2.0 and 3.0, each read as exactly its cells; and a
//! one-line error for every array lifegen does not read. The files are written here by hand, as
//! `numpy.save` writes them (python/tests does the same with numpy itself).

mod shell;

use std::path::Path;

use lifegen_runtime::formats::npy::shape_text;
use shell::{assert_one_line_error, lifegen, run_ok};

/// A `.npy` file as `numpy.save` writes one: the header padded with spaces to a multiple of 64
/// bytes, then the elements.
fn npy(version: u8, descr: &str, fortran: bool, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let shape = shape_text(shape);
    let dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    npy_of_dict(version, &dict, data)
}

/// A `.npy` file of the header `dict`, then `data`.
fn npy_of_dict(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let length_bytes = if version == 1 { 2 } else { 4 };
    let prefix = 8 + length_bytes;
    let text_len = (prefix + dict.len() + 1).next_multiple_of(64) - prefix;
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.extend([version, 0]);
    bytes.extend(&(text_len as u32).to_le_bytes()[..length_bytes]);
    bytes.extend(format!("{dict:<width$}\n", width = text_len - 1).as_bytes());
    assert_eq!(bytes.len() % 64, 0);
    bytes.extend(data);
    bytes
}

/// `height` rows of `width` random cells.
fn random_cells(width: usize, height: usize, seed: u64) -> Vec<Vec<bool>> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..height)
        .map(|_| {
            (0..width)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % 5 < 2
                })
                .collect()
        })
        .collect()
}

/// The cells an element each, row by row (C order) or column by column (Fortran order).
fn elements(cells: &[Vec<bool>], fortran: bool) -> Vec<u8> {
    let (height, width) = (cells.len(), cells[0].len());
    if fortran {
        (0..width)
            .flat_map(|x| (0..height).map(move |y| u8::from(cells[y][x])))
            .collect()
    } else {
        cells.iter().flatten().map(|&c| u8::from(c)).collect()
    }
}

/// The rows packed into `columns` words each, as lifegen stores them.
fn packed(cells: &[Vec<bool>], columns: usize) -> Vec<Vec<u64>> {
    cells
        .iter()
        .map(|row| {
            let mut words = vec![0u64; columns];
            for (x, _) in row.iter().enumerate().filter(|(_, c)| **c) {
                words[x / 64] |= 1 << (x % 64);
            }
            words
        })
        .collect()
}

/// The words of a packed array as its elements' bytes, in C or Fortran order.
fn word_bytes(rows: &[Vec<u64>], fortran: bool) -> Vec<u8> {
    let columns = rows[0].len();
    let words: Vec<u64> = if fortran {
        (0..columns)
            .flat_map(|k| rows.iter().map(move |row| row[k]))
            .collect()
    } else {
        rows.iter().flatten().copied().collect()
    };
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// The universe `input` makes (with `extra` arguments), as the rows of the lifegen universe
/// file it converts to: (width, height, rows' bytes).
fn universe_of(dir: &Path, input: &str, extra: &[&str]) -> (String, Vec<u8>) {
    let out = dir.join("converted.npy");
    let out = out.to_str().unwrap();
    let log = run_ok(
        &[
            &["run", "--input", input, "--gens", "0", "--output", out],
            extra,
        ]
        .concat(),
    );
    let universe = log
        .lines()
        .find_map(|l| l.strip_prefix("universe: "))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let bytes = std::fs::read(out).unwrap();
    std::fs::remove_file(out).unwrap();
    // The rows start at byte 4096 and end where lifegen's metadata starts: `{"format"`.
    let end = bytes.windows(9).rposition(|w| w == b"{\"format\"").unwrap();
    (universe, bytes[4096..end].to_vec())
}

/// The bytes of the universe rows lifegen should hold for `cells` in a `width`-cell-wide,
/// `height`-row universe, the cells at its corner.
fn expected_rows(cells: &[Vec<bool>], width: usize, height: usize) -> Vec<u8> {
    let mut placed = packed(cells, width.div_ceil(64));
    placed.resize(height, vec![0; width.div_ceil(64)]);
    word_bytes(&placed, false)
}

#[test]
fn every_array_kind_reads_as_exactly_its_cells() {
    let dir = tempfile::tempdir().unwrap();
    // Odd widths: one cell, 67 (a word and 3 cells), 130; a single row; 64 exactly.
    for (seed, (width, height)) in [(67, 13), (1, 5), (130, 9), (64, 1), (3, 70)]
        .into_iter()
        .enumerate()
    {
        let cells = random_cells(width, height, seed as u64 + 1);
        let shape = [height as u64, width as u64];
        let expected = expected_rows(&cells, width, height);
        let size = format!("{width}x{height}");
        for fortran in [false, true] {
            let bytes = elements(&cells, fortran);
            for (descr, version) in [("|b1", 1), ("|u1", 2), ("|u1", 3), ("|b1", 3)] {
                let name = format!("cells-{width}-{}-{fortran}-{version}.npy", &descr[1..]);
                let file = write(
                    dir.path(),
                    &name,
                    &npy(version, descr, fortran, &shape, &bytes),
                );
                let (universe, rows) = universe_of(dir.path(), &file, &[]);
                assert_eq!(universe, size, "{name}");
                assert!(rows == expected, "{name}: the cells differ");
            }
            // Packed rows: 64 cells a word, so the width comes from --size; a spare word a row
            // (all dead) is allowed.
            for columns in [width.div_ceil(64), width.div_ceil(64) + 1] {
                let words = word_bytes(&packed(&cells, columns), fortran);
                let name = format!("packed-{width}-{columns}-{fortran}.npy");
                let file = write(
                    dir.path(),
                    &name,
                    &npy(1, "<u8", fortran, &[height as u64, columns as u64], &words),
                );
                let (universe, rows) = universe_of(dir.path(), &file, &["--size", &size]);
                assert_eq!(universe, size, "{name}");
                assert!(rows == expected, "{name}: the cells differ");
                // Without --size: 64 cells a word.
                let (universe, rows) = universe_of(dir.path(), &file, &[]);
                assert_eq!(universe, format!("{}x{height}", 64 * columns), "{name}");
                assert!(
                    rows == expected_rows(&cells, 64 * columns, height),
                    "{name}: the cells differ at the array's own width"
                );
            }
        }
    }
}

#[test]
fn arrays_read_in_several_bands_are_exactly_their_cells() {
    // A band of a C-order array is about 4 MiB of rows; of a Fortran-order one at least 4096
    // rows of every column: the first and third arrays take two and three bands, as do both
    // packed ones.
    let dir = tempfile::tempdir().unwrap();
    for (width, height, descr, fortran) in [
        (4000, 1100, "|b1", false),
        (4000, 1100, "|u1", true),
        (3, 8200, "|b1", true),
        (3, 8200, "|u1", false),
    ] {
        let cells = random_cells(width, height, width as u64);
        let name = format!("big-{width}-{}-{fortran}.npy", &descr[1..]);
        let file = write(
            dir.path(),
            &name,
            &npy(
                1,
                descr,
                fortran,
                &[height as u64, width as u64],
                &elements(&cells, fortran),
            ),
        );
        let (universe, rows) = universe_of(dir.path(), &file, &[]);
        assert_eq!(universe, format!("{width}x{height}"), "{name}");
        assert!(rows == expected_rows(&cells, width, height), "{name}");
    }
    // Packed rows: random words, every bit a cell (the width 64 a word).
    for (columns, height, fortran) in [(100, 5300, false), (2, 8200, true)] {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let rows: Vec<Vec<u64>> = (0..height)
            .map(|_| {
                (0..columns)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state
                    })
                    .collect()
            })
            .collect();
        let name = format!("big-packed-{columns}-{fortran}.npy");
        let shape = [height as u64, columns as u64];
        let file = write(
            dir.path(),
            &name,
            &npy(1, "<u8", fortran, &shape, &word_bytes(&rows, fortran)),
        );
        let (universe, read) = universe_of(dir.path(), &file, &[]);
        assert_eq!(universe, format!("{}x{height}", 64 * columns), "{name}");
        assert!(read == word_bytes(&rows, false), "{name}");
    }
}

#[test]
fn an_array_sits_at_the_corner_of_a_larger_universe_and_runs_as_the_reference_does() {
    let dir = tempfile::tempdir().unwrap();
    let cells = random_cells(67, 40, 9);
    let c = write(
        dir.path(),
        "c.npy",
        &npy(1, "|b1", false, &[40, 67], &elements(&cells, false)),
    );
    let f = write(
        dir.path(),
        "f.npy",
        &npy(1, "|u1", true, &[40, 67], &elements(&cells, true)),
    );
    let (universe, rows) = universe_of(dir.path(), &c, &["--size", "100x50"]);
    assert_eq!(universe, "100x50");
    assert!(rows == expected_rows(&cells, 100, 50));
    // 30 generations on the CPU from either file, and on the reference from one: the same.
    let outputs: Vec<String> = [(&c, "cpu"), (&f, "cpu"), (&c, "reference")]
        .iter()
        .enumerate()
        .map(|(i, (input, backend))| {
            let out = dir.path().join(format!("after{i}.rle"));
            let log = run_ok(&[
                "run",
                "--input",
                input,
                "--gens",
                "30",
                "--backend",
                backend,
                "--output",
                out.to_str().unwrap(),
            ]);
            // A plain array carries no rule: B3/S23.
            assert!(log.contains("rule: B3/S23:T67,40\n"), "{log}");
            assert!(log.contains("numpy array"), "{log}");
            std::fs::read_to_string(out).unwrap()
        })
        .collect();
    assert_eq!(outputs[0], outputs[2]);
    assert_eq!(outputs[1], outputs[2]);
    assert!(outputs[0].starts_with("x = 67, y = 40, rule = B3/S23:T67,40\n"));
    // --rule applies to it.
    let log = run_ok(&["run", "--input", &c, "--gens", "1", "--rule", "B36/S23"]);
    assert!(log.contains("rule: B36/S23:T67,40\n"), "{log}");
}

#[test]
fn a_run_from_an_array_into_a_universe_file_resumes_as_any_other() {
    let dir = tempfile::tempdir().unwrap();
    let cells = random_cells(90, 70, 4);
    let input = write(
        dir.path(),
        "in.npy",
        &npy(1, "|u1", false, &[70, 90], &elements(&cells, false)),
    );
    let output = dir.path().join("out.npy");
    let args = [
        "run",
        "--input",
        &input,
        "--gens",
        "12",
        "--backend",
        "cpu",
        "--output",
        output.to_str().unwrap(),
    ];
    let log = run_ok(&args);
    assert!(log.contains("to generation 12"), "{log}");
    let log = run_ok(&args);
    assert!(log.contains("already holds generation 12"), "{log}");
    // The output, a lifegen universe file, is read as one: at its generation.
    let on = dir.path().join("on.npy");
    let log = run_ok(&[
        "run",
        "--input",
        output.to_str().unwrap(),
        "--gens",
        "1",
        "--output",
        on.to_str().unwrap(),
    ]);
    assert!(log.contains("universe file"), "{log}");
    assert!(log.contains("at generation 12"), "{log}");
    assert!(log.contains("to generation 13"), "{log}");
}

/// A file's name, its bytes, the arguments after `--input FILE`, and what its error says.
type Refused<'a> = (&'a str, Vec<u8>, &'a [&'a str], Vec<&'a str>);

#[test]
fn every_array_lifegen_does_not_read_gets_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = "lifegen reads 2-D arrays of bool, uint8 (0 or 1) or little-endian uint64";
    let mut bad_c = vec![0u8; 6 * 10];
    bad_c[3 * 10 + 5] = 2;
    // Fortran order: element [4, 8] is at 8 * 6 + 4.
    let mut bad_f = vec![0u8; 6 * 10];
    bad_f[8 * 6 + 4] = 255;
    let words = |n: usize| vec![0u8; 8 * n];
    let mut past = words(6);
    // Fortran order: element [1, 1] of a (3, 2) array is word 1 * 3 + 1; bit 14 of it: x = 78.
    past[8 * 4 + 1] = 0x40;
    let mut v4 = npy(1, "|u1", false, &[2, 2], &[0; 4]);
    v4[6] = 4;
    let cases: Vec<Refused> = vec![
        (
            "value.npy",
            npy(1, "|u1", false, &[6, 10], &bad_c),
            &[],
            vec![
                "value.npy: element [3, 5] of its uint8 array is 2",
                "0 (dead) or 1",
            ],
        ),
        (
            "fvalue.npy",
            npy(1, "|u1", true, &[6, 10], &bad_f),
            &[],
            vec!["element [4, 8] of its uint8 array is 255"],
        ),
        (
            "bool.npy",
            npy(1, "|b1", false, &[6, 10], &bad_c),
            &[],
            vec!["element [3, 5] of its bool array is 2"],
        ),
        (
            "int.npy",
            npy(1, "<i8", false, &[2, 2], &words(4)),
            &[],
            vec![
                "int.npy holds an array of int64 ('<i8'), shape (2, 2)",
                accepted,
            ],
        ),
        (
            "float.npy",
            npy(1, "<f8", false, &[2, 2], &words(4)),
            &[],
            vec!["an array of float64 ('<f8')", accepted],
        ),
        (
            "big.npy",
            npy(1, ">u8", false, &[2, 2], &words(4)),
            &[],
            vec!["an array of big-endian uint64 ('>u8')", accepted],
        ),
        (
            "object.npy",
            npy(1, "|O", false, &[1, 1], &words(1)),
            &[],
            vec!["an array of Python objects ('|O')", accepted],
        ),
        (
            "record.npy",
            npy_of_dict(
                1,
                "{'descr': [('a', '<i4'), ('b', '|u1')], 'fortran_order': False, 'shape': (1,), }",
                &[0; 5],
            ),
            &[],
            vec!["an array of a structured dtype, shape (1,)", accepted],
        ),
        (
            "flat.npy",
            npy(1, "|b1", false, &[4], &[0; 4]),
            &[],
            vec!["holds a 1-D array of bool, shape (4,)", accepted],
        ),
        (
            "cube.npy",
            npy(1, "|u1", false, &[2, 2, 2], &[0; 8]),
            &[],
            vec!["holds a 3-D array of uint8, shape (2, 2, 2)", accepted],
        ),
        (
            "v4.npy",
            v4,
            &[],
            vec![
                "v4.npy is not a .npy file lifegen reads",
                "version is 4.0",
                "1.0, 2.0 and 3.0",
            ],
        ),
        (
            "text.npy",
            b"x = 3, y = 1\n3o!\n".to_vec(),
            &[],
            vec!["text.npy is not a .npy file lifegen reads: it does not start as a .npy file"],
        ),
        (
            "header.npy",
            {
                let mut b = npy(1, "|u1", false, &[2, 2], &[0; 4]);
                b[20] = b'#';
                b
            },
            &[],
            vec!["its .npy header does not read"],
        ),
        (
            "short.npy",
            {
                let b = npy(1, "|u1", false, &[20, 20], &[0; 400]);
                b[..b.len() - 7].to_vec()
            },
            &[],
            vec![
                "short.npy is truncated",
                "(20, 20) uint8 array ends at byte",
            ],
        ),
        (
            "cut.npy",
            npy(1, "|u1", false, &[2, 2], &[0; 4])[..70].to_vec(),
            &[],
            vec![
                "cut.npy is truncated or was extended: it ends at byte 70, inside its .npy header",
            ],
        ),
        (
            "long.npy",
            npy(1, "|u1", false, &[2, 2], &[0; 9]),
            &[],
            vec![
                "long.npy is truncated or was extended",
                "5 bytes past the end",
            ],
        ),
        (
            "wide.npy",
            npy(1, "<u8", false, &[3, 2], &words(6)),
            &["--size", "129x3"],
            vec!["the universe is 129 cells wide, more than the 128 a row of its (3, 2) uint64"],
        ),
        (
            "past.npy",
            npy(1, "<u8", true, &[3, 2], &past),
            &["--size", "70x3"],
            vec![
                "row 1 of its uint64 array has a live cell at x = 78",
                "width of 70",
            ],
        ),
        (
            "large.npy",
            npy(1, "|b1", false, &[6, 10], &[0; 60]),
            &["--size", "9x6"],
            vec!["the pattern is 10x6, larger than the 9x6 universe"],
        ),
        (
            "tall.npy",
            npy(1, "<u8", false, &[3, 2], &words(6)),
            &["--size", "128x2"],
            vec!["the pattern is 128x3, larger than the 128x2 universe"],
        ),
        (
            "empty.npy",
            npy(1, "|b1", false, &[0, 5], &[]),
            &[],
            vec!["5x0 has a zero side"],
        ),
    ];
    for (name, bytes, extra, needles) in cases {
        let path = write(dir.path(), name, &bytes);
        let args = [&["run", "--input", path.as_str(), "--gens", "0"][..], extra].concat();
        assert_one_line_error(&lifegen(&args), &needles);
    }
    // An empty array inside a --size is an empty universe.
    let empty = write(dir.path(), "e.npy", &npy(1, "|b1", false, &[0, 5], &[]));
    let log = run_ok(&["run", "--input", &empty, "--size", "8x8", "--gens", "0"]);
    assert!(log.contains("population: 0\n"), "{log}");
}

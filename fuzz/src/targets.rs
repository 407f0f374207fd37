//! The fuzz targets and their properties. (The command line is fuzzed from the `lifegen` binary's
//! own tests, src/fuzz_cli.rs, where its clap definitions are; this crate gives it the driver.)

use lifegen_gen::Rule;
use lifegen_gen::map::{MapNeighbourhood, MapNotation};
use lifegen_gen::rule::{self, LtlNotation, RuleSpec};
use lifegen_runtime::Universe;
use lifegen_runtime::formats::npy::{self, Dtype, Header};
use lifegen_runtime::formats::rle::{self, Reader};
use lifegen_runtime::formats::universe_file::UniverseFile;

use crate::Outcome;

/// The largest side of a universe the RLE target makes, and the most cells in it, so memory and
/// time per input stay bounded (2^20 cells is 128 KiB; a larger header is read, not written back).
pub const MAX_SIDE: u64 = 4096;
pub const MAX_CELLS: u64 = 1 << 20;

/// Tokens of the RLE format and of rules, for the mutator.
pub const RLE_DICTIONARY: &[&str] = &[
    "x = ",
    "y = ",
    "X = ",
    ", ",
    ",",
    "=",
    "rule = ",
    "RULE=",
    "B3/S23",
    "b3s23",
    "23/3",
    "B36/S23",
    "R5,C0,M1,S34..58,B34..45,NM",
    "R5,C0,S33-57,B34-45",
    "5,34,45,34,58",
    "!",
    "$",
    "b",
    "o",
    ".",
    "A",
    "B",
    "p",
    "#CXRLE Pos=0,0 Gen=0\n",
    "#C ",
    "#N ",
    "#",
    ":T",
    ":T10,10",
    ":T0,0",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\u{feff}",
    "\0",
];

/// Tokens of rule strings.
pub const RULE_DICTIONARY: &[&str] = &[
    "B",
    "S",
    "b",
    "s",
    "/",
    "B3/S23",
    "b3s23",
    "23/3",
    "B36/S23",
    "B012345678/S012345678",
    "B2-a/S12",
    "B2ce3aeiknrjy/S23-a",
    "cekain",
    "jqrytwz",
    "H",
    "V",
    "_",
    "MAP",
    "MAPARYXfhZofugWaH7oaIDogBZofuhogOiAaIDogIAAgAAWaH7oaIDogGiA6ICAAIAAaIDogIAAgACAAIAAAAAAAA",
    "MAPemNy9NhbDhiAcd0Bxk+Bww",
    "MAPABCDEF",
    "==",
    "/2/3",
    "345/2/4",
    "B3/S23/3",
    "/256",
    "/257",
    "C3",
    "C256",
    "R3,C5,M0,S2..6,B3..5,NM",
    "W30",
    "R",
    "C0",
    "C1",
    "C2",
    "M0",
    "M1",
    ",",
    "..",
    "-",
    "NM",
    "NN",
    "NC",
    "N+",
    "N2",
    "NX",
    "N*",
    "N#",
    "NH",
    "NB",
    "ND",
    "NA",
    "N3",
    "NG",
    "NL",
    "N@",
    "N@891891",
    "NW",
    "NW123401323",
    "NWF2F4F1F2FH",
    "H",
    "L",
    "N",
    "R5,C0,M1,S34..58,B34..45,NM",
    "R5,C0,S33-57,B34-45",
    "R500,C0,M0,S0..1000,B0..1000,NM",
    "5,34,45,34,58",
    ":",
    ":T",
    ":T10,10",
    ":T0,0",
    ":P10,10",
    " ",
    "\t",
    "\n",
    "\u{1b}",
    "\u{feff}",
    "é",
];

/// An error message stays on one line, without raw control characters, and short.
fn check_message(what: &str, message: &str) -> Result<(), String> {
    if message.chars().any(char::is_control) {
        return Err(format!(
            "{what} error message holds a control character: {message:?}"
        ));
    }
    if message.len() > 1000 {
        return Err(format!(
            "{what} error message is {} bytes long: {:?}...",
            message.len(),
            &message[..message.floor_char_boundary(200)]
        ));
    }
    Ok(())
}

/// `rule::parse` on the input read as UTF-8 (lossily). Properties: never a panic; an error
/// message on one line; an accepted rule prints, and the printed rule reads back to the same
/// rule (notation included) and prints the same again; its Catagolue name, when life-like, reads
/// back to the same rule too.
pub fn rule(data: &[u8]) -> Result<Outcome, String> {
    let text = String::from_utf8_lossy(data);
    let spec = match rule::parse(&text) {
        Ok(spec) => spec,
        Err(e) => {
            check_message("rule", &e.to_string())?;
            return Ok(Outcome::Rejected);
        }
    };
    let printed = spec.to_string();
    let again = rule::parse(&printed)
        .map_err(|e| format!("{text:?} read as {spec:?}, printed {printed:?}, re-read: {e}"))?;
    if again != spec {
        return Err(format!(
            "{text:?} read as {spec:?}, printed {printed:?}, re-read as {again:?}"
        ));
    }
    if again.to_string() != printed {
        return Err(format!(
            "{printed:?} prints as {:?} when read back",
            again.to_string()
        ));
    }
    match spec.rule {
        Rule::LifeLike(life) => {
            let name = life.catagolue_name();
            let back = rule::parse(&name).map_err(|e| format!("{name:?}: {e}"))?;
            if back.rule != spec.rule || back.size.is_some() {
                return Err(format!("{name:?} of {spec:?} reads as {back:?}"));
            }
        }
        Rule::LargerThanLife(ltl) => {
            if ltl.notation == LtlNotation::Hrot && ltl.include_centre {
                return Err(format!("{text:?}: an HROT rule with M1: {ltl:?}"));
            }
            if ltl.radius == 0 || ltl.radius > rule::MAX_RADIUS {
                return Err(format!("{text:?}: radius {} accepted", ltl.radius));
            }
            // A torus is never narrower than Golly makes it.
            if let Some((w, h)) = spec.size
                && w.min(h) < ltl.min_torus_side()
            {
                return Err(format!("{text:?}: torus {w}x{h} below 2r"));
            }
            let _ = ltl.neighbourhood_size();
        }
        Rule::Map(map) => {
            if map.life_like().is_some() && map.notation == MapNotation::Letters {
                return Err(format!(
                    "{text:?}: a life-like rule read as a table: {map:?}"
                ));
            }
            let mask = map.neighbourhood.mask();
            if let Some(index) = (0..512).find(|&i| map.next(i) != map.next(i & mask)) {
                return Err(format!(
                    "{text:?}: neighbourhood {index:#b} reads cells outside {:?}",
                    map.neighbourhood
                ));
            }
            if map.notation == MapNotation::Letters
                && map.neighbourhood == MapNeighbourhood::Moore
                && !map.is_isotropic()
            {
                return Err(format!("{text:?}: a Hensel rule that is not isotropic"));
            }
        }
        Rule::Generations(rule) => {
            if !(2..=256).contains(&rule.states) {
                return Err(format!("{text:?}: {} states accepted", rule.states));
            }
            if rule.alive.rule().states() != 2 {
                return Err(format!("{text:?}: an alive rule of more than two states"));
            }
            if rule.next_state(0, false) != 0 || rule.next_state(1, true) != 1 {
                return Err(format!(
                    "{text:?}: {rule:?} does not keep dead and alive cells"
                ));
            }
        }
    }
    Ok(Outcome::Accepted)
}

/// The RLE reader on the raw bytes. Properties: never a panic; every error message on one line;
/// every run of live cells inside the declared x by y and after the one before; the streaming
/// reader and `rle::parse` agree; and for a header of at most [`MAX_SIDE`] a side (and
/// [`MAX_CELLS`] cells), an accepted pattern read into a universe (a little larger than the
/// header asks, when the input's length says so) writes with `rle::write_to` as RLE that reads
/// back to the same universe, the same rule, and the universe's size as the torus.
pub fn rle(data: &[u8]) -> Result<Outcome, String> {
    let reader = match Reader::new(data) {
        Ok(reader) => reader,
        Err(e) => {
            check_message("RLE header", &e.to_string())?;
            if rle_parse(data).is_some_and(|r| r.is_ok()) {
                return Err("rle::parse accepts what Reader::new refuses".into());
            }
            return Ok(Outcome::Rejected);
        }
    };
    let header = reader.header().clone();
    let (width, height) = (header.width, header.height);

    // Every run, checked against the header: inside it, in reading order, not overlapping.
    let (mut runs, mut dying) = (Vec::new(), Vec::new());
    let mut highest_state = 1;
    let mut order_error = None;
    let mut last_end = (0u64, 0u64);
    let streamed = Reader::new(data)
        .expect("the header read once reads again")
        .read_runs(|y, x, length, state| {
            highest_state = highest_state.max(state);
            let end = x.checked_add(length);
            let inside = length > 0 && y < height && end.is_some_and(|e| e <= width);
            let after = (y, x) >= last_end;
            if (!inside || !after) && order_error.is_none() {
                order_error = Some(format!(
                    "run ({y}, {x}, {length}) in a {width}x{height} pattern after one ending at \
                     {last_end:?}"
                ));
            }
            last_end = (y, end.unwrap_or(u64::MAX));
            if runs.len() + dying.len() < 1 << 16 {
                match state {
                    1 => runs.push((y, x, length)),
                    _ => dying.push((y, x, length, state)),
                }
            }
        });
    if let Some(message) = order_error {
        return Err(message);
    }
    if let Err(e) = &streamed {
        check_message("RLE body", &e.to_string())?;
    }
    if let Some(parsed) = rle_parse(data) {
        match (&parsed, &streamed) {
            (Ok(p), Ok(())) => {
                if (p.width, p.height, p.rule) != (width, height, header.rule)
                    || (p.runs.len() + p.dying.len() < 1 << 16
                        && (p.runs != runs || p.dying != dying))
                {
                    return Err("rle::parse and the streaming reader disagree".into());
                }
            }
            (Err(a), Err(b)) if a == b => {}
            _ => {
                return Err(format!(
                    "rle::parse gives {:?}, the streaming reader {streamed:?}",
                    parsed.as_ref().map(|p| p.runs.len())
                ));
            }
        }
    }
    if streamed.is_err() {
        return Ok(Outcome::Rejected);
    }
    if width == 0
        || height == 0
        || width > MAX_SIDE
        || height > MAX_SIDE
        || width * height > MAX_CELLS
    {
        return Ok(Outcome::Accepted);
    }

    // Into a universe, then written and read back.
    let grow = u64::from(data.len().is_multiple_of(3)) * (data.len() as u64 % 67);
    let (uw, uh) = (
        (width + grow).min(MAX_SIDE),
        (height + grow / 8).min(MAX_SIDE),
    );
    let rule = header.rule.map_or(Rule::CONWAY, |r| r.rule);
    let states = rule.states();
    let mut universe = empty_universe(uw, uh)?
        .with_states(states)
        .map_err(|e| e.to_string())?;
    let read = Reader::new(data)
        .expect("the header read once reads again")
        .read_into(&mut universe);
    match read {
        Err(e) if highest_state >= states => {
            check_message("RLE states", &e.to_string())?;
            return Ok(Outcome::Rejected);
        }
        Err(e) => {
            return Err(format!(
                "read_runs accepted the cells, read_into refused: {e}"
            ));
        }
        Ok(()) if highest_state >= states => {
            return Err(format!(
                "a cell of state {highest_state} read into {states} states"
            ));
        }
        Ok(()) => {}
    }
    let population: u64 =
        runs.iter().map(|r| r.2).sum::<u64>() + dying.iter().map(|r| r.2).sum::<u64>();
    if runs.len() + dying.len() < 1 << 16 && universe.population() != population {
        return Err(format!(
            "{} live cells in the universe, {population} in the runs",
            universe.population()
        ));
    }
    let mut written = Vec::new();
    rle::write_to(&universe, &rule, &mut written).map_err(|e| format!("write_to: {e}"))?;
    let text = String::from_utf8(written).map_err(|_| "write_to wrote non-UTF-8".to_string())?;
    if let Some(long) = text.lines().skip(1).find(|l| l.len() > 70) {
        return Err(format!("a written line of {} bytes: {long:?}", long.len()));
    }
    let back = Reader::new(text.as_bytes())
        .map_err(|e| format!("the written RLE's header is refused: {e}\n{text}"))?;
    let torus = rule.torus_size((uw, uh));
    let expected = RuleSpec {
        size: Some(torus),
        ..RuleSpec::plain(rule)
    };
    if (
        back.header().width,
        back.header().height,
        back.header().rule,
    ) != (uw, uh, Some(expected))
    {
        return Err(format!(
            "wrote a {uw}x{uh} universe of {expected}, read back {:?}",
            back.header()
        ));
    }
    let mut again = empty_universe(uw, uh)?
        .with_states(states)
        .map_err(|e| e.to_string())?;
    back.read_into(&mut again)
        .map_err(|e| format!("the written RLE's cells are refused: {e}"))?;
    if again != universe {
        return Err(format!(
            "the written RLE reads back to other cells: {} live, not {}",
            again.population(),
            universe.population()
        ));
    }
    Ok(Outcome::Accepted)
}

thread_local! {
    /// Empty universes by size. `Universe::new` reads /proc for the memory left (about 100 us);
    /// a clone of an empty one is a copy.
    static EMPTY: std::cell::RefCell<std::collections::HashMap<(u64, u64), Universe>> =
        Default::default();
}

/// An empty `width` x `height` universe: made with `Universe::new` once per size, then cloned.
fn empty_universe(width: u64, height: u64) -> Result<Universe, String> {
    EMPTY.with_borrow_mut(|cache| {
        if cache.len() > 1024 {
            cache.clear();
        }
        if let Some(universe) = cache.get(&(width, height)) {
            return Ok(universe.clone());
        }
        let universe =
            Universe::new(width, height).map_err(|e| format!("{width}x{height}: {e}"))?;
        cache.insert((width, height), universe.clone());
        Ok(universe)
    })
}

/// `rle::parse` where the input is UTF-8 (it takes a `&str`), its runs kept when there are not
/// too many.
fn rle_parse(data: &[u8]) -> Option<Result<rle::Pattern, rle::RleError>> {
    let text = std::str::from_utf8(data).ok()?;
    // A huge run count over a huge header makes a long list; the reader above is bounded,
    // `parse` holds every run. Inputs are at most a few KiB, so at most that many runs.
    Some(rle::parse(text))
}

/// Tokens of universe files, for the mutator: the `.npy` header's pieces and the metadata's.
pub const UNIVERSE_DICTIONARY: &[&str] = &[
    "\u{93}NUMPY",
    "'descr': '<u8'",
    "'fortran_order': False",
    "'shape': (",
    ", ",
    ")",
    "{\"format\":\"lifegen universe\",\"version\":1,",
    "\"width\":",
    "\"height\":",
    "\"rule\":\"B3/S23\"",
    "\"generation\":",
    "\"checksums\":{\"algorithm\":\"crc32\",\"rows_per_block\":",
    "\"blocks\":[",
    "]}",
    "\"run\":null",
    "LIFEGEN1",
    "0",
    "1",
    "64",
    "65",
    "4294967295",
    "18446744073709551615",
    "\0\0\0\0",
    "\u{ff}\u{ff}\u{ff}\u{ff}",
];

/// The universe-file reader on the raw bytes. Properties: never a panic; every error message on
/// one line; for an accepted file of at most [`MAX_CELLS`] cells, checking it and reading it
/// agree, and what is read has the metadata's size and no cell past the width.
pub fn universe(data: &[u8]) -> Result<Outcome, String> {
    let name = std::path::Path::new("fuzz.npy");
    let file = match UniverseFile::from_bytes(name, data.to_vec()) {
        Ok(file) => file,
        Err(e) => {
            check_message("universe file", &e.to_string())?;
            return Ok(Outcome::Rejected);
        }
    };
    let (width, height) = (file.width(), file.height());
    if width.saturating_mul(height) > MAX_CELLS {
        return Ok(Outcome::Accepted);
    }
    let verified = file.verify();
    match (file.read_verified(), verified) {
        (Ok(universe), Ok(())) => {
            if (universe.width() as u64, universe.height() as u64) != (width, height) {
                return Err(format!(
                    "a {width}x{height} file read as {}x{}",
                    universe.width(),
                    universe.height()
                ));
            }
            let mask = universe.last_word_mask();
            if (0..universe.height())
                .any(|y| universe.row(y).last().is_some_and(|w| w & !mask != 0))
            {
                return Err("a cell past the width was read".into());
            }
            Ok(Outcome::Accepted)
        }
        (Err(a), Err(b)) => {
            check_message("universe rows", &a.to_string())?;
            if a.to_string() != b.to_string() {
                return Err(format!("reading says {a}, checking says {b}"));
            }
            // Past the header and metadata: the rows' checks ran.
            Ok(Outcome::Accepted)
        }
        (read, checked) => Err(format!(
            "reading gives {:?}, checking {:?}",
            read.map(|_| ()),
            checked
        )),
    }
}

/// Tokens of plain `.npy` arrays, for the mutator: the header's pieces, dtypes, shapes, and
/// cells other than 0 and 1.
pub const NUMPY_DICTIONARY: &[&str] = &[
    "{'descr': ",
    "'|b1'",
    "'|u1'",
    "'<u8'",
    "'>u8'",
    "'<i8'",
    "'|O'",
    "[('a', '<i4')]",
    "'fortran_order': ",
    "True",
    "False",
    "'shape': (",
    ", ",
    ",)",
    ")",
    "}",
    "L",
    "0",
    "1",
    "64",
    "4294967295",
    "18446744073709551615",
    "\0",
    "\u{1}",
    "\u{2}",
    "\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}",
];

/// The plain-array reader on the raw bytes. Properties: never a panic; every error message on
/// one line; an accepted array of at most [`MAX_CELLS`] cells reads into a universe of its own
/// size and into a taller one (wider too for cells) alike, the same error or the same live
/// cells: as many as the array holds ones (bool, uint8) or set bits (uint64), none past the
/// width; and a cell array is refused only when it holds a value other than 0 and 1.
pub fn numpy(data: &[u8]) -> Result<Outcome, String> {
    let name = std::path::Path::new("fuzz.npy");
    let array = match npy::Array::from_bytes(name, data.to_vec()) {
        Ok(array) => array,
        Err(e) => {
            check_message("numpy array", &e.to_string())?;
            return Ok(Outcome::Rejected);
        }
    };
    let (width, height) = array.size();
    if width == 0 || height == 0 || width.saturating_mul(height) > MAX_CELLS {
        return Ok(Outcome::Accepted);
    }
    let offset = Header::parse(data)
        .map_err(|e| format!("an accepted array's header does not parse: {e}"))?
        .data_offset as usize;
    let elements = &data[offset..];
    let (ones, valid) = match array.dtype() {
        Dtype::U64 => (
            elements.iter().map(|b| u64::from(b.count_ones())).sum(),
            true,
        ),
        Dtype::Bool | Dtype::U8 => (
            elements.iter().filter(|&&b| b == 1).count() as u64,
            elements.iter().all(|&b| b <= 1),
        ),
    };
    let wider = if array.dtype() == Dtype::U64 { 0 } else { 3 };
    let mut own = empty_universe(width, height)?;
    let mut larger = empty_universe(width + wider, height + 2)?;
    match (array.read_into(&mut own), array.read_into(&mut larger)) {
        (Ok(()), Ok(())) => {
            if !valid {
                return Err("a cell array with a value above 1 was read".into());
            }
            for universe in [&own, &larger] {
                let mask = universe.last_word_mask();
                if (0..universe.height())
                    .any(|y| universe.row(y).last().is_some_and(|w| w & !mask != 0))
                {
                    return Err("a cell past the width was read".into());
                }
                if universe.population() != ones {
                    return Err(format!(
                        "{} live cells read from an array of {ones}",
                        universe.population()
                    ));
                }
            }
            Ok(Outcome::Accepted)
        }
        (Err(a), Err(b)) => {
            check_message("numpy cells", &a.to_string())?;
            if a.to_string() != b.to_string() {
                return Err(format!("its own size says {a}, a larger universe {b}"));
            }
            if valid {
                return Err(format!("a valid array refused: {a}"));
            }
            Ok(Outcome::Accepted)
        }
        (a, b) => Err(format!(
            "its own size gives {:?}, a larger universe {:?}",
            a.map_err(|e| e.to_string()),
            b.map_err(|e| e.to_string())
        )),
    }
}

/// Life 1.05/1.06 and plaintext (`formats::cell_lines`): never a panic; an error names its line
/// (within the input) in a clean message; what is read places every cell at its coordinates, and
/// a box small enough to make holds them all.
pub fn cell_lines(data: &[u8]) -> Result<Outcome, String> {
    use lifegen_runtime::formats::{apgcode, cell_lines};
    // The same bytes as an apgcode: never a panic, and a clean message naming a byte inside.
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(e) = apgcode::read(text)
    {
        check_message("apgcode", &e.to_string())?;
        if e.byte == 0 || e.byte > data.len() + 1 {
            return Err(format!(
                "apgcode error at byte {} of {}: {e}",
                e.byte,
                data.len()
            ));
        }
    }
    let list = match cell_lines::read(data) {
        Ok(list) => list,
        Err(e) => {
            check_message("cell list", &e.to_string())?;
            let lines = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
            if e.line == 0 || e.line > lines {
                return Err(format!("error on line {} of {lines}: {e}", e.line));
            }
            return Ok(Outcome::Rejected);
        }
    };
    let span = |of: fn(&(i64, i64)) -> i64| {
        let (lo, hi) = (
            list.cells.iter().map(of).min(),
            list.cells.iter().map(of).max(),
        );
        lo.zip(hi)
            .map_or(0, |(lo, hi)| i128::from(hi) - i128::from(lo) + 1)
    };
    let small = span(|c| c.0).saturating_mul(span(|c| c.1)) <= i128::from(MAX_CELLS);
    if small
        && list.cells.len() < 1 << 16
        && let Ok((universe, (left, top))) = list.to_universe(2)
    {
        for &(x, y) in &list.cells {
            if !universe.get((x - left) as usize, (y - top) as usize) {
                return Err(format!("cell ({x}, {y}) missing from its box"));
            }
        }
    }
    Ok(Outcome::Accepted)
}

pub const CELL_LINES_DICTIONARY: &[&str] = &[
    "#Life 1.05\n",
    "#Life 1.06\n",
    "#P ",
    "#N\n",
    "#R 23/3\n",
    "#R B36/S23\n",
    "!Name: x\n",
    ".*",
    "**\n",
    "-3 4\n",
    "9223372036854775807 ",
    "-9223372036854775808",
    "3O",
    "..O\n",
    "xs4_",
    "xp2_",
    "xq4_",
    "y",
    "z",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_targets_accept_good_input_and_refuse_bad() {
        assert_eq!(rle(b"x = 3, y = 3\nbo$2bo$3o!"), Ok(Outcome::Accepted));
        assert_eq!(rle(b"x = 3, y = 3\nbo$2bo$3o"), Ok(Outcome::Rejected));
        assert_eq!(
            rle(b"x = 12, y = 3, rule = R2,C0,M1,S1..3,B2..3,NN\n12o!"),
            Ok(Outcome::Accepted)
        );
        assert_eq!(rle(b"\xff\xfe"), Ok(Outcome::Rejected));
        assert_eq!(rule(b"B3/S23:T10,10"), Ok(Outcome::Accepted));
        assert_eq!(rule(b"R5,C0,S33-57,B34-45,NN:T3,3"), Ok(Outcome::Accepted));
        assert_eq!(rule(b"B9/S"), Ok(Outcome::Rejected));
        let mut bytes = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        let dict = "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }";
        bytes.extend(format!("{dict:<117}\n").as_bytes());
        bytes.extend([0, 1, 1, 0, 1, 1]);
        assert_eq!(numpy(&bytes), Ok(Outcome::Accepted));
        bytes[130] = 5;
        assert_eq!(numpy(&bytes), Ok(Outcome::Accepted));
        assert_eq!(numpy(&bytes[..bytes.len() - 1]), Ok(Outcome::Rejected));
    }

    #[test]
    fn error_messages_with_control_characters_are_caught() {
        assert!(check_message("x", "line\nbreak").is_err());
        assert!(check_message("x", "fine").is_ok());
    }
}

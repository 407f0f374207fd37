//! RLE files as Golly writes them, round trips, and property tests: readers never panic.

use lifegen_gen::rule;
use lifegen_runtime::Universe;
use lifegen_runtime::formats::rle;
use proptest::prelude::*;

fn read(name: &str) -> rle::Pattern {
    let text = std::fs::read_to_string(format!("tests/data/{name}")).unwrap();
    rle::parse(&text).unwrap()
}

#[test]
fn golly_files_read() {
    let gun = read("gosper_glider_gun.rle");
    assert_eq!((gun.width, gun.height, gun.population()), (36, 9, 36));
    let rows = read("trailing_rows.rle");
    assert_eq!(
        rows.runs,
        vec![(0, 0, 1), (0, 11, 1), (2, 3, 3), (2, 9, 1), (6, 0, 12)]
    );
    assert_eq!(rows.rule.unwrap().rule.to_string(), "B3/S23");
    let disc = read("ltl_disc.rle");
    assert_eq!(
        disc.rule.unwrap().rule.to_string(),
        // Golly prints every two-state rule with C0.
        "R5,C0,M1,S34..58,B34..45,NM"
    );
}

/// The README section after `## {title}`, up to the next section.
fn readme_section(readme: &str, title: &str) -> String {
    let start = format!("\n## {title}\n");
    let rest = readme
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("no {title}"));
    rest.split("\n## ").next().unwrap().to_string()
}

/// The `code` spans of a piece of Markdown.
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_rule_the_readme_gives_as_an_example_parses_and_writes_back() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let mut examples = vec![];
    // The Rules table's second column, the Larger than Life table's last, and `--rule R`.
    for line in readme_section(&readme, "Rules").lines() {
        if line.starts_with("| ") && !line.starts_with("| family") {
            examples.extend(code_spans(line.split(" | ").nth(1).unwrap()));
        }
    }
    for line in readme_section(&readme, "Larger than Life").lines() {
        if line.starts_with("| `N") {
            examples.extend(code_spans(line.rsplit(" | ").next().unwrap()));
        }
    }
    for span in code_spans(&readme) {
        if let Some(text) = span.strip_prefix("--rule ") {
            examples.push(text.to_string());
        }
    }
    assert!(examples.len() > 40, "{examples:?}");
    for text in examples {
        let spec = rule::parse(&text).unwrap_or_else(|e| panic!("README's {text:?}: {e}"));
        let written = spec.to_string();
        let again =
            rule::parse(&written).unwrap_or_else(|e| panic!("{text:?} as {written:?}: {e}"));
        assert_eq!(again, spec, "{text:?} written as {written:?}");
        assert_eq!(again.to_string(), written, "{text:?}");
    }
}

#[test]
fn golly_files_round_trip() {
    for name in [
        "gosper_glider_gun.rle",
        "glider_cxrle.rle",
        "trailing_rows.rle",
        "ltl_disc.rle",
    ] {
        let pattern = read(name);
        let universe = rle::to_universe(&pattern).unwrap();
        let rule = pattern.rule.unwrap().rule;
        let written = rle::write(&universe, &rule);
        let again = rle::parse(&written).unwrap();
        assert_eq!(rle::to_universe(&again).unwrap(), universe, "{name}");
        assert_eq!(again.rule.unwrap().rule, rule);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn rle_reader_never_panics(text in "\\PC{0,200}") {
        let _ = rle::parse(&text);
    }

    #[test]
    fn rle_reader_never_panics_on_near_rle(
        header in "(x ?= ?[0-9]{1,3}, ?y ?= ?[0-9]{1,3}(, rule = [BSbs0-9/:T,]{0,12})?)?\n",
        body in "[0-9bo$!.A \n#xyz]{0,120}",
    ) {
        let _ = rle::parse(&format!("{header}{body}"));
    }

    #[test]
    fn rule_parser_never_panics(text in "\\PC{0,40}") {
        let _ = rule::parse(&text);
    }

    #[test]
    fn rule_parser_never_panics_on_near_rules(
        text in "[BSbsRCMN0-9/:T,.x ]{0,30}",
    ) {
        if let Ok(spec) = rule::parse(&text) {
            // Whatever parses prints as a rule that parses to the same thing.
            prop_assert_eq!(rule::parse(&spec.to_string()).unwrap(), spec);
        }
    }

    #[test]
    fn written_universes_read_back(w in 1u64..200, h in 1u64..40, density in 0.0f64..1.0, seed: u64) {
        let universe = Universe::random(w, h, density, seed).unwrap();
        let text = rle::write(&universe, &lifegen_gen::Rule::CONWAY);
        let pattern = rle::parse(&text).unwrap();
        prop_assert_eq!(rle::to_universe(&pattern).unwrap(), universe);
    }
}

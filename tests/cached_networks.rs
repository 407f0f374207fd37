//! The search results kept in kernels_out/networks/: each one read back, re-verified on every input
//! row against its shape's spec, and stored byte for byte as lifegen renders it.

use std::path::Path;

use lifegen_gen::Basis;
use lifegen_gen::cache::SearchRecord;
use lifegen_gen::shapes::Shape;

#[test]
fn every_cached_network_verifies_and_is_rendered_canonically() {
    let records = SearchRecord::load_all(Path::new(".")).unwrap();
    assert!(
        !records.is_empty(),
        "kernels_out/networks/ holds no records"
    );
    for (path, record) in &records {
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(
            record.render(),
            text,
            "{} is not as lifegen writes it",
            path.display()
        );
        assert_eq!(
            *path,
            SearchRecord::path(Path::new("."), &record.rule, record.shape, record.basis),
            "record in the wrong file"
        );
    }
}

#[test]
fn the_conway_results_are_kept() {
    let conway = lifegen_gen::LifeLike::CONWAY;
    let read = |shape, basis| {
        let path = SearchRecord::path(Path::new("."), &conway, shape, basis);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        SearchRecord::parse(&path.display().to_string(), &text).unwrap()
    };
    let blog = read(Shape::Blog, Basis::Lut3);
    assert_eq!((blog.gates(), blog.proven_optimal), (4, true));
    let row_shared = read(Shape::RowShared, Basis::Lut3);
    assert_eq!((row_shared.gates(), row_shared.proven_optimal), (6, true));
}

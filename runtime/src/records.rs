//! The search records in kernels_out/networks/ when this library was built: the ones its
//! kernels were generated from (runtime/build.rs embeds them).

use lifegen_gen::cache::{CacheError, SearchRecord};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_records.rs"));
}

/// Every embedded record, parsed.
pub fn embedded() -> Result<Vec<SearchRecord>, CacheError> {
    embedded::RECORDS
        .iter()
        .map(|(path, text)| SearchRecord::parse(path, text))
        .collect()
}

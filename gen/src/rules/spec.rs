//! Specifications (truth tables with don't-cares) and exhaustive verification of networks.

use std::ops::ControlFlow;

use crate::network::Network;

/// The largest number of inputs a spec may have (2^24 rows, 2 MiB per output table).
pub const MAX_SPEC_INPUTS: usize = 24;

/// One output of a spec: for each input row, its value and whether it matters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruthTable {
    num_inputs: usize,
    /// Bit `r % 64` of word `r / 64` is the value on row `r`.
    on: Vec<u64>,
    /// Set where the value is required; clear where it is a don't-care.
    care: Vec<u64>,
}

impl TruthTable {
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }
    /// The required value on `row`, or `None` for a don't-care.
    pub fn value(&self, row: usize) -> Option<bool> {
        let (word, bit) = (row / 64, row % 64);
        (self.care[word] >> bit & 1 == 1).then(|| self.on[word] >> bit & 1 == 1)
    }
}

/// What a network must compute: named inputs and one truth table per output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    input_names: Vec<String>,
    outputs: Vec<TruthTable>,
}

impl Spec {
    /// Tabulates `f`, which maps an input row (bit `i` = input `i`) to the required value of each
    /// output (`None` = don't-care).
    pub fn from_fn(
        input_names: Vec<String>,
        num_outputs: usize,
        f: impl Fn(usize) -> Vec<Option<bool>>,
    ) -> Spec {
        let num_inputs = input_names.len();
        assert!(num_inputs <= MAX_SPEC_INPUTS, "too many inputs");
        let words = (1usize << num_inputs).div_ceil(64);
        let mut outputs = vec![
            TruthTable {
                num_inputs,
                on: vec![0; words],
                care: vec![0; words],
            };
            num_outputs
        ];
        for row in 0..1usize << num_inputs {
            let values = f(row);
            assert_eq!(values.len(), num_outputs, "one value per output");
            for (table, value) in outputs.iter_mut().zip(values) {
                if let Some(v) = value {
                    table.care[row / 64] |= 1 << (row % 64);
                    table.on[row / 64] |= (v as u64) << (row % 64);
                }
            }
        }
        Spec {
            input_names,
            outputs,
        }
    }

    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }
    pub fn num_inputs(&self) -> usize {
        self.input_names.len()
    }
    pub fn outputs(&self) -> &[TruthTable] {
        &self.outputs
    }
}

/// Why a network does not meet a spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("network has {network} inputs, spec has {spec}")]
    InputCount { network: usize, spec: usize },
    #[error("network has {network} outputs, spec has {spec}")]
    OutputCount { network: usize, spec: usize },
    #[error("output {output} is {got} on input row {row:#b}, spec requires {expected}")]
    Mismatch {
        output: usize,
        row: usize,
        got: bool,
        expected: bool,
    },
}

/// The word of input `input` for rows `64 * block .. 64 * block + 63`.
fn input_word(input: usize, block: usize) -> u64 {
    const PATTERNS: [u64; 6] = [
        0xAAAA_AAAA_AAAA_AAAA,
        0xCCCC_CCCC_CCCC_CCCC,
        0xF0F0_F0F0_F0F0_F0F0,
        0xFF00_FF00_FF00_FF00,
        0xFFFF_0000_FFFF_0000,
        0xFFFF_FFFF_0000_0000,
    ];
    match PATTERNS.get(input) {
        Some(&pattern) => pattern,
        None if block >> (input - 6) & 1 == 1 => !0,
        None => 0,
    }
}

/// Simulates `network` on every input row, 64 rows per word, and compares with `spec`.
pub fn verify(network: &Network, spec: &Spec) -> Result<(), VerifyError> {
    let mut first = None;
    for_each_wrong_word(network, spec, |output, block, wrong, got| {
        let bit = wrong.trailing_zeros() as usize;
        first = Some(VerifyError::Mismatch {
            output,
            row: block * 64 + bit,
            got: got >> bit & 1 == 1,
            expected: spec.outputs[output].on[block] >> bit & 1 == 1,
        });
        ControlFlow::Break(())
    })?;
    first.map_or(Ok(()), Err)
}

/// Every input row on which `network` breaks `spec`, in order (empty when it meets it).
pub fn wrong_rows(network: &Network, spec: &Spec) -> Result<Vec<usize>, VerifyError> {
    let mut rows = Vec::new();
    for_each_wrong_word(network, spec, |_, block, mut wrong, _| {
        while wrong != 0 {
            rows.push(block * 64 + wrong.trailing_zeros() as usize);
            wrong &= wrong - 1;
        }
        ControlFlow::Continue(())
    })?;
    rows.sort_unstable();
    rows.dedup();
    Ok(rows)
}

/// Calls `visit(output, block, wrong bits, network's word)` for each block of 64 rows where an
/// output is wrong, until it breaks.
fn for_each_wrong_word(
    network: &Network,
    spec: &Spec,
    mut visit: impl FnMut(usize, usize, u64, u64) -> ControlFlow<()>,
) -> Result<(), VerifyError> {
    if network.num_inputs() != spec.num_inputs() {
        return Err(VerifyError::InputCount {
            network: network.num_inputs(),
            spec: spec.num_inputs(),
        });
    }
    if network.outputs().len() != spec.outputs.len() {
        return Err(VerifyError::OutputCount {
            network: network.outputs().len(),
            spec: spec.outputs.len(),
        });
    }
    let n = spec.num_inputs();
    let rows = 1usize << n;
    let valid_rows = if rows >= 64 { !0 } else { (1u64 << rows) - 1 };
    let mut inputs = vec![0u64; n];
    for block in 0..rows.div_ceil(64) {
        for (i, word) in inputs.iter_mut().enumerate() {
            *word = input_word(i, block);
        }
        let got = network.eval(&inputs);
        for (output, (table, word)) in spec.outputs.iter().zip(got).enumerate() {
            let wrong = (word ^ table.on[block]) & table.care[block] & valid_rows;
            if wrong != 0 && visit(output, block, wrong, word).is_break() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A network together with the spec it was checked against: the only form that reaches a
/// backend or an emitter.
#[derive(Clone, Debug)]
pub struct VerifiedNetwork {
    network: Network,
    spec: Spec,
}

impl VerifiedNetwork {
    /// Checks `network` exhaustively against `spec`.
    pub fn new(network: Network, spec: Spec) -> Result<Self, VerifyError> {
        verify(&network, &spec)?;
        Ok(VerifiedNetwork { network, spec })
    }
    pub fn network(&self) -> &Network {
        &self.network
    }
    pub fn spec(&self) -> &Spec {
        &self.spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{NetworkBuilder, lut3};

    fn full_adder_spec() -> Spec {
        Spec::from_fn(vec!["a".into(), "b".into(), "c".into()], 2, |row| {
            let sum = row.count_ones();
            vec![Some(sum & 1 == 1), Some(sum >= 2)]
        })
    }

    #[test]
    fn full_adder_of_two_luts_verifies() {
        let mut b = NetworkBuilder::new(["a", "b", "c"]);
        let s = b.lut3(lut3::XOR3, 0, 1, 2);
        let c = b.lut3(lut3::MAJ, 0, 1, 2);
        verify(&b.finish("fa", vec![s, c]), &full_adder_spec()).unwrap();
    }

    #[test]
    fn a_wrong_network_is_caught_with_its_row() {
        let mut b = NetworkBuilder::new(["a", "b", "c"]);
        let s = b.lut3(lut3::XOR3, 0, 1, 2);
        let c = b.and(0, 1);
        let err = verify(&b.finish("bad", vec![s, c]), &full_adder_spec()).unwrap_err();
        assert_eq!(
            err,
            VerifyError::Mismatch {
                output: 1,
                row: 0b101,
                got: false,
                expected: true
            }
        );
    }

    #[test]
    fn dont_cares_are_ignored_and_wide_specs_work() {
        // 8 inputs: parity, but rows with input 7 set are don't-cares.
        let names: Vec<String> = (0..8).map(|i| format!("x{i}")).collect();
        let spec = Spec::from_fn(names.clone(), 1, |row| {
            vec![(row & 0x80 == 0).then_some(row.count_ones() % 2 == 1)]
        });
        let mut b = NetworkBuilder::new(names);
        let mut acc = b.xor(0, 1);
        for i in 2..7 {
            acc = b.xor(acc, i);
        }
        verify(&b.finish("parity7", vec![acc]), &spec).unwrap();
        assert_eq!(spec.outputs()[0].value(0x81), None);
        assert_eq!(spec.outputs()[0].value(0x03), Some(false));
    }
}

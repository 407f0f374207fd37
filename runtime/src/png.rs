//! A 1-bit PNG of the universe: live cells white, dead cells black.

use std::io::Write;

use crate::universe::Universe;

#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("PNG images are at most 2^31 - 1 pixels on a side; the universe is {0}x{1}")]
    TooLarge(usize, usize),
    #[error(transparent)]
    Encode(#[from] png::EncodingError),
}

/// Writes `universe` as a 1-bit greyscale PNG, row by row.
pub fn write(universe: &Universe, sink: impl Write) -> Result<(), PngError> {
    let (w, h) = (universe.width(), universe.height());
    let too_large = || PngError::TooLarge(w, h);
    let width = u32::try_from(w)
        .ok()
        .filter(|&v| v < 1 << 31)
        .ok_or_else(too_large)?;
    let height = u32::try_from(h)
        .ok()
        .filter(|&v| v < 1 << 31)
        .ok_or_else(too_large)?;
    let mut encoder = png::Encoder::new(sink, width, height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    let mut writer = encoder.write_header()?;
    let mut stream = writer.stream_writer()?;
    let bytes_per_row = w.div_ceil(8);
    let mut line = vec![0u8; bytes_per_row];
    for y in 0..h {
        let row = universe.row(y);
        for (k, byte) in line.iter_mut().enumerate() {
            // PNG packs the leftmost pixel in the most significant bit.
            *byte = ((row[k / 8] >> (8 * (k % 8))) as u8).reverse_bits();
        }
        stream.write_all(&line).map_err(png::EncodingError::from)?;
    }
    stream.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_to_the_same_cells() {
        let u = Universe::random(77, 13, 0.5, 5).unwrap();
        let mut bytes = Vec::new();
        write(&u, &mut bytes).unwrap();
        let decoder = png::Decoder::new(bytes.as_slice());
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (77, 13));
        for y in 0..13 {
            for x in 0..77 {
                let byte = buf[y * info.line_size + x / 8];
                assert_eq!(byte >> (7 - x % 8) & 1 == 1, u.get(x, y), "({x},{y})");
            }
        }
    }
}

//! A PNG of the universe: a 1-bit image, live cells white and dead cells black, or for a rule of
//! more states an 8-bit image of the state colours of [`crate::formats::colours`].

use std::io::Write;

use crate::universe::Universe;

#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("PNG images are at most 2^31 - 1 pixels on a side; the universe is {0}x{1}")]
    TooLarge(usize, usize),
    #[error(transparent)]
    Encode(#[from] png::EncodingError),
}

/// The PNG's width and height for a universe of `width` x `height` cells, or
/// [`PngError::TooLarge`]: check this before a long run whose result must be written.
pub fn check_size(width: usize, height: usize) -> Result<(u32, u32), PngError> {
    let side = |v: usize| u32::try_from(v).ok().filter(|&v| v < 1 << 31);
    match (side(width), side(height)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(PngError::TooLarge(width, height)),
    }
}

/// Writes `universe` as a 1-bit greyscale PNG, row by row. Every error of `sink` is returned,
/// those of the closing IEND chunk and the final flush included.
pub fn write(universe: &Universe, sink: impl Write) -> Result<(), PngError> {
    let (w, h) = (universe.width(), universe.height());
    let (width, height) = check_size(w, h)?;
    let mut encoder = png::Encoder::new(sink, width, height);
    let states = universe.states() > 2;
    if states {
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(crate::formats::colours::palette(universe.states()));
    } else {
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::One);
    }
    let mut writer = encoder.write_header()?;
    let mut stream = writer.stream_writer()?;
    let bytes_per_row = if states { w } else { w.div_ceil(8) };
    let mut line = vec![0u8; bytes_per_row];
    for y in 0..h {
        if states {
            for (x, byte) in line.iter_mut().enumerate() {
                *byte = universe.state(x, y) as u8;
            }
        } else {
            let row = universe.row(y);
            for (k, byte) in line.iter_mut().enumerate() {
                // PNG packs the leftmost pixel in the most significant bit.
                *byte = ((row[k / 8] >> (8 * (k % 8))) as u8).reverse_bits();
            }
        }
        stream.write_all(&line).map_err(png::EncodingError::from)?;
    }
    stream.finish()?;
    // Not left to the writer's drop, which writes IEND but drops its errors, and flushes nothing.
    writer.finish()?;
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

    /// A sink that takes `room` bytes and then fails as a full disk does.
    struct FullAfter {
        room: usize,
        flushed: bool,
    }

    impl Write for FullAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.flushed = true;
            Ok(())
        }
    }

    #[test]
    fn every_write_error_is_returned_and_the_sink_is_flushed() {
        let u = Universe::random(64, 64, 0.5, 1).unwrap();
        let mut bytes = Vec::new();
        write(&u, &mut bytes).unwrap();
        // The last 12 bytes are the IEND chunk: its errors count as much as the pixels'.
        for room in 0..bytes.len() {
            let mut sink = FullAfter {
                room,
                flushed: false,
            };
            assert!(
                write(&u, &mut sink).is_err(),
                "{room} of {} bytes",
                bytes.len()
            );
        }
        let mut sink = FullAfter {
            room: bytes.len(),
            flushed: false,
        };
        write(&u, &mut sink).unwrap();
        assert!(sink.flushed);
        assert!(matches!(
            check_size(1 << 31, 1),
            Err(PngError::TooLarge(..))
        ));
        assert_eq!(check_size((1 << 31) - 1, 7).unwrap(), ((1 << 31) - 1, 7));
    }
}

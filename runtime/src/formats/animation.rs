//! An animated GIF of a run: one frame per snapshot of the universe, live cells white, dead cells
//! black, each cell a square of `scale` x `scale` pixels. For small universes only: every frame
//! is a full image, so the limits below keep a file (and the time to encode it) sensible.

use std::borrow::Cow;
use std::io::Write;

use crate::universe::Universe;

/// The largest side of a frame, in pixels.
pub const MAX_PIXELS_ON_A_SIDE: u64 = 4096;

/// The most frames an animation holds.
pub const MAX_FRAMES: u64 = 10_000;

/// The time each frame is shown, in hundredths of a second.
pub const FRAME_DELAY: u16 = 5;

#[derive(Debug, thiserror::Error)]
pub enum GifError {
    #[error("--scale must be at least 1")]
    ZeroScale,
    #[error(
        "a GIF of the {width}x{height} universe at scale {scale} would be {pixels_w}x{pixels_h} \
         pixels; each side must be at most {MAX_PIXELS_ON_A_SIDE}"
    )]
    TooLarge {
        width: u64,
        height: u64,
        scale: u64,
        pixels_w: u128,
        pixels_h: u128,
    },
    #[error("{0} frames are more than the {MAX_FRAMES} a GIF may hold; raise --every")]
    TooManyFrames(u128),
    #[error(
        "the live cells of {frames} frames kept for the GIF passed {} MiB; raise --every",
        MAX_PLANE_FRAME_BYTES >> 20
    )]
    FramesTooLarge { frames: usize },
    #[error(transparent)]
    Encode(#[from] gif::EncodingError),
}

/// The frames of a run of `gens` generations with one every `every`: generation 0, then every
/// `every`-th up to `gens`. `every` must be at least 1.
pub fn frame_count(gens: u64, every: u64) -> u128 {
    u128::from(gens / every) + 1
}

/// The frame's pixel size for a `width` x `height` universe at `scale`, checked against the
/// limits together with the number of frames: check this before a run whose GIF must be written.
pub fn check(width: u64, height: u64, scale: u64, frames: u128) -> Result<(u16, u16), GifError> {
    if scale == 0 {
        return Err(GifError::ZeroScale);
    }
    let (pixels_w, pixels_h) = (
        u128::from(width) * u128::from(scale),
        u128::from(height) * u128::from(scale),
    );
    let limit = u128::from(MAX_PIXELS_ON_A_SIDE);
    if pixels_w > limit || pixels_h > limit {
        return Err(GifError::TooLarge {
            width,
            height,
            scale,
            pixels_w,
            pixels_h,
        });
    }
    if frames > u128::from(MAX_FRAMES) {
        return Err(GifError::TooManyFrames(frames));
    }
    Ok((pixels_w as u16, pixels_h as u16))
}

/// An animated GIF being written, a frame at a time.
pub struct GifWriter<W: Write> {
    encoder: gif::Encoder<W>,
    size: (u16, u16),
    scale: usize,
    pixels: Vec<u8>,
}

impl<W: Write> GifWriter<W> {
    /// Writes the header for frames of a `width` x `height` universe of `states` states at
    /// `scale`, looping forever.
    pub fn new(
        sink: W,
        (width, height): (u64, u64),
        states: u16,
        scale: u64,
    ) -> Result<Self, GifError> {
        let size = check(width, height, scale, 1)?;
        // Index s is the colour of state s.
        let palette = crate::formats::colours::palette(states);
        let mut encoder = gif::Encoder::new(sink, size.0, size.1, &palette)?;
        encoder.set_repeat(gif::Repeat::Infinite)?;
        Ok(GifWriter {
            encoder,
            size,
            scale: scale as usize,
            pixels: vec![0; usize::from(size.0) * usize::from(size.1)],
        })
    }

    /// Adds `universe` as the next frame; it must be the size given to [`GifWriter::new`].
    pub fn frame(&mut self, universe: &Universe) -> Result<(), GifError> {
        assert_eq!(
            (
                universe.width() * self.scale,
                universe.height() * self.scale
            ),
            (usize::from(self.size.0), usize::from(self.size.1)),
            "a frame of another size"
        );
        self.frame_at(Some((universe, (0, 0))))
    }

    /// Adds the next frame: dead cells, with `cells` (if any) drawn with its top-left cell at
    /// `(x, y)` of the frame; it must fit.
    pub fn frame_at(&mut self, cells: Option<(&Universe, (usize, usize))>) -> Result<(), GifError> {
        let w = usize::from(self.size.0);
        self.pixels.fill(0);
        if let Some((universe, (left, top))) = cells {
            let s = self.scale;
            assert!(
                (left + universe.width()) * s <= w
                    && (top + universe.height()) * s <= usize::from(self.size.1),
                "a frame's cells past its edges"
            );
            for y in 0..universe.height() {
                let row = (top + y) * s;
                let line = &mut self.pixels[row * w..(row + 1) * w];
                for x in 0..universe.width() {
                    let cell = universe.state(x, y) as u8;
                    line[(left + x) * s..(left + x + 1) * s].fill(cell);
                }
                for copy in 1..s {
                    self.pixels
                        .copy_within(row * w..(row + 1) * w, (row + copy) * w);
                }
            }
        }
        let frame = gif::Frame {
            width: self.size.0,
            height: self.size.1,
            delay: FRAME_DELAY,
            buffer: Cow::Borrowed(&self.pixels),
            ..gif::Frame::default()
        };
        self.encoder.write_frame(&frame)?;
        Ok(())
    }

    /// Writes the trailer and hands back the sink (not flushed: the caller flushes it).
    pub fn finish(self) -> Result<W, GifError> {
        Ok(self
            .encoder
            .into_inner()
            .map_err(gif::EncodingError::from)?)
    }
}

/// Cells kept for frames of a run on the unbounded plane at most; more is refused.
pub const MAX_PLANE_FRAME_BYTES: u64 = 1 << 30;

/// The frames of a run on Golly's unbounded plane, kept until it ends: the picture is the box
/// that holds every frame's live cells, known only then.
pub struct PlaneFrames {
    frames: Vec<Option<(Universe, (i64, i64))>>,
    /// Left, top, right, bottom of every frame's live cells so far.
    bounds: Option<(i64, i64, i64, i64)>,
    bytes: u64,
    scale: u64,
}

impl PlaneFrames {
    pub fn new(scale: u64) -> Result<PlaneFrames, GifError> {
        check(1, 1, scale, 1)?;
        Ok(PlaneFrames {
            frames: Vec::new(),
            bounds: None,
            bytes: 0,
            scale,
        })
    }

    /// The next frame: the live cells with Golly's coordinates of their top-left cell (`None`:
    /// nothing lives). Refused as soon as the frames' box outgrows a GIF or the frames kept
    /// outgrow [`MAX_PLANE_FRAME_BYTES`].
    pub fn record(&mut self, live: Option<(Universe, (i64, i64))>) -> Result<(), GifError> {
        if let Some((cells, (x, y))) = &live {
            let (right, bottom) = (x + cells.width() as i64 - 1, y + cells.height() as i64 - 1);
            let bounds = match self.bounds {
                None => (*x, *y, right, bottom),
                Some((l, t, r, b)) => (l.min(*x), t.min(*y), r.max(right), b.max(bottom)),
            };
            let (width, height) = (
                (bounds.2 - bounds.0 + 1) as u64,
                (bounds.3 - bounds.1 + 1) as u64,
            );
            check(width, height, self.scale, self.frames.len() as u128 + 1)?;
            self.bytes += 8 * cells.words().len() as u64;
            if self.bytes > MAX_PLANE_FRAME_BYTES {
                return Err(GifError::FramesTooLarge {
                    frames: self.frames.len() + 1,
                });
            }
            self.bounds = Some(bounds);
        }
        self.frames.push(live);
        Ok(())
    }

    /// Golly's coordinates of the picture's top-left cell, and its size in cells.
    pub fn picture(&self) -> ((i64, i64), (u64, u64)) {
        self.bounds.map_or(((0, 0), (1, 1)), |(l, t, r, b)| {
            ((l, t), ((r - l + 1) as u64, (b - t + 1) as u64))
        })
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Writes the frames as a GIF of the box that holds them all.
    pub fn write<W: Write>(self, sink: W, states: u16) -> Result<W, GifError> {
        let ((left, top), size) = self.picture();
        let mut gif = GifWriter::new(sink, size, states, self.scale)?;
        for frame in &self.frames {
            gif.frame_at(
                frame
                    .as_ref()
                    .map(|(cells, (x, y))| (cells, ((x - left) as usize, (y - top) as usize))),
            )?;
        }
        gif.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of `bytes`, as palette indices, with their sizes.
    fn decode(bytes: &[u8]) -> Vec<(u16, u16, Vec<u8>)> {
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::Indexed);
        let mut decoder = options.read_info(bytes).unwrap();
        let mut frames = Vec::new();
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            frames.push((frame.width, frame.height, frame.buffer.to_vec()));
        }
        frames
    }

    #[test]
    fn frames_decode_to_the_cells_scaled() {
        let universes: Vec<Universe> = (0..3)
            .map(|seed| Universe::random(13, 7, 0.4, seed).unwrap())
            .collect();
        for scale in [1u64, 3] {
            let mut writer = GifWriter::new(Vec::new(), (13, 7), 2, scale).unwrap();
            for u in &universes {
                writer.frame(u).unwrap();
            }
            let frames = decode(&writer.finish().unwrap());
            assert_eq!(frames.len(), 3);
            let s = scale as usize;
            for (u, (w, h, pixels)) in universes.iter().zip(frames) {
                assert_eq!((w, h), (13 * scale as u16, 7 * scale as u16));
                for py in 0..7 * s {
                    for px in 0..13 * s {
                        assert_eq!(
                            pixels[py * 13 * s + px] == 1,
                            u.get(px / s, py / s),
                            "scale {scale}, pixel ({px},{py})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn plane_frames_share_the_box_that_holds_them_all() {
        let glider = |x: i64, y: i64| {
            let mut cells = Universe::new(3, 3).unwrap();
            for (cx, cy) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
                cells.set(cx, cy, true);
            }
            Some((cells, (x, y)))
        };
        let mut frames = PlaneFrames::new(2).unwrap();
        frames.record(glider(-5, 7)).unwrap();
        frames.record(None).unwrap();
        frames.record(glider(10, 9)).unwrap();
        assert_eq!(frames.picture(), ((-5, 7), (18, 5)));
        let decoded = decode(&frames.write(Vec::new(), 2).unwrap());
        assert_eq!(decoded.len(), 3);
        let lit = |pixels: &[u8]| -> Vec<(usize, usize)> {
            (0..pixels.len())
                .filter(|&i| pixels[i] == 1)
                .map(|i| (i % 36 / 2, i / 36 / 2))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        assert_eq!(
            lit(&decoded[0].2),
            vec![(0, 2), (1, 0), (1, 2), (2, 1), (2, 2)]
        );
        assert!(lit(&decoded[1].2).is_empty());
        assert_eq!(
            lit(&decoded[2].2),
            vec![(15, 4), (16, 2), (16, 4), (17, 3), (17, 4)]
        );
        // A box past a GIF's side is refused at the frame that makes it.
        let mut wide = PlaneFrames::new(1).unwrap();
        wide.record(glider(0, 0)).unwrap();
        assert!(matches!(
            wide.record(glider(5000, 0)),
            Err(GifError::TooLarge { .. })
        ));
    }

    #[test]
    fn limits() {
        assert_eq!(check(4096, 1, 1, 1).unwrap(), (4096, 1));
        assert_eq!(check(1024, 512, 4, 10_000).unwrap(), (4096, 2048));
        assert!(matches!(
            check(4097, 1, 1, 1),
            Err(GifError::TooLarge { .. })
        ));
        assert!(matches!(
            check(2049, 8, 2, 1),
            Err(GifError::TooLarge { .. })
        ));
        assert!(matches!(
            check(u64::MAX, 8, u64::MAX, 1),
            Err(GifError::TooLarge { .. })
        ));
        assert!(matches!(check(8, 8, 0, 1), Err(GifError::ZeroScale)));
        assert!(matches!(
            check(8, 8, 1, 10_001),
            Err(GifError::TooManyFrames(10_001))
        ));
        assert_eq!(frame_count(12, 4), 4);
        assert_eq!(frame_count(13, 4), 4);
        assert_eq!(frame_count(0, 4), 1);
        assert_eq!(frame_count(u64::MAX, 1), 1 << 64);
    }
}

//! Output files written whole or not at all. Each goes to a temporary file beside its target
//! (same directory, so the rename stays on one filesystem) that replaces the target only once it
//! was written, flushed and synced; a failed run leaves an existing file as it was and removes
//! the temporary one.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use lifegen_runtime::interrupt::TemporaryFile;

/// An output file being written.
pub struct Pending {
    /// The path as given, for messages.
    given: PathBuf,
    /// The file the rename replaces: the given path, its symbolic links resolved.
    target: PathBuf,
    /// The temporary file, until it is renamed or removed; `None` for a device or a pipe, which
    /// is written in place.
    temp: Option<PathBuf>,
    /// The temporary file, for the interrupt watchdog to remove should it end the process.
    _registered: Option<TemporaryFile>,
    sink: BufWriter<File>,
}

impl Pending {
    /// Opens the temporary file for `path` now, so a bad path fails before a long run rather
    /// than after it.
    pub fn create(path: &Path) -> Result<Pending> {
        let cannot = || format!("cannot write {}", path.display());
        let existing = fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("cannot write {}: it is a directory", path.display());
        }
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            // /dev/null, /dev/full, a pipe: nothing to replace, written as they are.
            let file = OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
                .with_context(cannot)?;
            return Ok(Pending {
                given: path.to_path_buf(),
                target: path.to_path_buf(),
                temp: None,
                _registered: None,
                sink: BufWriter::new(file),
            });
        }
        let target = match &existing {
            Some(_) => {
                // Refuse what we could not write in place (a read-only file), as before; opening
                // without truncating leaves it as it is.
                OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(cannot)?;
                fs::canonicalize(path).with_context(cannot)?
            }
            None => path.to_path_buf(),
        };
        let name = target
            .file_name()
            .with_context(|| format!("cannot write {}: not a file name", path.display()))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".lifegen-{}.tmp", std::process::id()));
        let temp = target.with_file_name(temp_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .with_context(cannot)?;
        let pending = Pending {
            given: path.to_path_buf(),
            target,
            _registered: Some(TemporaryFile::register(&temp)),
            temp: Some(temp),
            sink: BufWriter::new(file),
        };
        if let (Some(meta), Some(temp)) = (&existing, &pending.temp) {
            // The replacement keeps the old file's permissions.
            fs::set_permissions(temp, meta.permissions()).with_context(cannot)?;
        }
        Ok(pending)
    }

    /// Where to write.
    pub fn sink(&mut self) -> &mut BufWriter<File> {
        &mut self.sink
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// Flushes what is buffered and, for a temporary file, syncs it to the disk: a full disk or
    /// any late write error is reported here.
    pub fn finish(&mut self) -> Result<()> {
        self.sink
            .flush()
            .and_then(|()| match self.temp {
                Some(_) => self.sink.get_ref().sync_all(),
                None => Ok(()),
            })
            .with_context(|| format!("cannot write {}", self.given.display()))
    }

    /// Puts the finished file in place of the target.
    pub fn commit(mut self) -> Result<()> {
        if let Some(temp) = &self.temp {
            fs::rename(temp, &self.target)
                .with_context(|| format!("cannot write {}", self.given.display()))?;
            self.temp = None;
        }
        Ok(())
    }
}

impl Drop for Pending {
    /// A file never committed is removed; the target stays as it was.
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

/// The file `path` names, as well as it can be told before it exists: the canonical path of the
/// file, else of its folder joined with its name, else the path as given.
fn identity(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (fs::canonicalize(folder), path.file_name()) {
        (Ok(real), Some(name)) => real.join(name),
        _ => path.to_path_buf(),
    }
}

/// Refuses two outputs that name the same file: the second would silently replace the first.
pub fn check_distinct(outputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (flag_a, a)) in outputs.iter().enumerate() {
        for (flag_b, b) in &outputs[i + 1..] {
            if identity(a) == identity(b) {
                bail!(
                    "{flag_a} {} and {flag_b} {} are the same file; give each its own path",
                    a.display(),
                    b.display()
                );
            }
        }
    }
    Ok(())
}

/// Refuses a picture (`--png`, `--gif`) that would be written over the `--input` pattern: it
/// would replace the pattern with an image. (`--output` may name the input: the file is read
/// before the new one takes its place.)
pub fn check_pictures_spare_input(input: Option<&Path>, pictures: &[(&str, &Path)]) -> Result<()> {
    let Some(input) = input else {
        return Ok(());
    };
    for (flag, path) in pictures {
        if identity(input) == identity(path) {
            bail!(
                "{flag} {} is the --input pattern; give the picture its own path",
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lifegen-output-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaced_only_on_commit_and_the_temporary_file_goes_on_failure() {
        let dir = scratch("replace");
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("keep.rle");
        fs::write(&target, "precious\n").unwrap();
        // Written but dropped before the commit, as when a later step fails.
        let mut dropped = Pending::create(&target).unwrap();
        dropped.sink().write_all(b"new\n").unwrap();
        dropped.finish().unwrap();
        assert_eq!(entries(&dir).len(), 2, "{:?}", entries(&dir));
        drop(dropped);
        assert_eq!(fs::read_to_string(&target).unwrap(), "precious\n");
        assert_eq!(entries(&dir), ["keep.rle"]);
        let mut written = Pending::create(&target).unwrap();
        written.sink().write_all(b"new\n").unwrap();
        written.finish().unwrap();
        written.commit().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
        assert_eq!(entries(&dir), ["keep.rle"]);
    }

    #[test]
    fn a_full_device_is_reported_at_the_flush() {
        let mut full = Pending::create(Path::new("/dev/full")).unwrap();
        full.sink().write_all(b"x").unwrap();
        let err = full.finish().unwrap_err();
        assert!(
            format!("{err:#}").contains("cannot write /dev/full"),
            "{err:#}"
        );
    }

    #[test]
    fn the_same_file_twice_is_refused() {
        let dir = scratch("same");
        fs::create_dir_all(&dir).unwrap();
        let a = dir.join("x");
        let also_a = dir.join(".").join("x");
        let b = dir.join("y");
        // Before the file exists and after.
        for _ in 0..2 {
            let err = check_distinct(&[("--output", &a), ("--png", &also_a)]).unwrap_err();
            assert!(err.to_string().contains("are the same file"), "{err}");
            check_distinct(&[("--output", &a), ("--png", &b)]).unwrap();
            fs::write(&a, "").unwrap();
        }
    }
}

//! Atomic output through Occam's one writer ([`occam_io`]): a temporary file in the same
//! directory, flushed and renamed over the target, so a reader never sees a half-written file;
//! the mode follows the umask (or the replaced file) and a killed run's temporary files are
//! removed by the next write.

use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    occam_io::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Writes `path` atomically, streaming the contents through `fill` (see [`occam_io::write_with`]).
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    occam_io::write_with(path, fill).map_err(|e| Error::io(path, e))
}

/// Writes `value` as pretty JSON to `path` atomically, streamed (no whole-file string).
pub fn write_json_pretty<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    write_with(path, |w| {
        serde_json::to_writer_pretty(w, value).map_err(std::io::Error::other)
    })
}

/// Checks that outputs can be written into `dir` (creating it if needed), before a long run.
pub fn check_dir(dir: &Path) -> Result<()> {
    occam_io::check_dir(dir).map_err(|e| Error::io(dir, format!("cannot write output here: {e}")))
}

/// Creates `dir` (and its parents) if needed.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    occam_io::ensure_dir(dir).map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write(&p, b"one").unwrap();
        write(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/a.txt");
        assert!(write(&p, b"x").unwrap_err().is_user_error());
    }
}

//! # occam-io: every file Occam reads and writes
//!
//! Reading ([`data`]): the data files of a model, CSV with a header row (a fast direct path and
//! the `csv` crate for quoted files), `.npy` and `.npz` arrays, Parquet files, and the row and
//! column selection of `--data x=FILE:COLUMNS@ROWS`, each read into a [`data::Table`]; every
//! error is a [`data::DataError`] naming the file, and the row and column of the cell when there
//! is one. Every crate that reads data files reads them here.
//!
//! Writing: the one atomic writer of every Occam output.
//!
//! [`write()`] puts the bytes in a temporary file `.occam-<pid>-<n>.tmp` in the target's directory,
//! flushes it to disk and renames it over the target, so a reader sees the old file or the new
//! one, never half of one. The new file gets the mode an ordinary `create` would give it (0666
//! less the umask), or keeps the mode of the file it replaces. A run killed mid-write (SIGKILL)
//! leaves its temporary file behind; the next write into that directory removes every
//! `.occam-*.tmp` whose process is gone.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod data;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const PREFIX: &str = ".occam-";
const SUFFIX: &str = ".tmp";

/// Writes `bytes` to `path` atomically (see the crate docs).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes `path` atomically as [`write()`] does, streaming: `fill` writes the contents into a
/// buffered writer on the temporary file, so a large output (a posterior of millions of values
/// as JSON) is never held in memory as one string.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_stale(&dir);
    let (tmp, file) = create_temp(&dir)?;
    let result = (|| {
        let mut w = io::BufWriter::with_capacity(1 << 16, file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        if let Ok(old) = fs::metadata(path) {
            file.set_permissions(old.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` and its parents if needed.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Checks, before any long computation, that outputs can be written into `dir`: creates it if
/// needed and writes and removes a temporary file there.
pub fn check_dir(dir: &Path) -> io::Result<()> {
    ensure_dir(dir)?;
    if !fs::metadata(dir)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "exists and is not a directory",
        ));
    }
    let (tmp, file) = create_temp(dir)?;
    drop(file);
    fs::remove_file(tmp)
}

/// A new temporary file in `dir`, created exclusively (so with the umask's mode).
fn create_temp(dir: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("{PREFIX}{}-{n}{SUFFIX}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The process id in a temporary file's name, if it is one of ours.
fn temp_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    inner.split_once('-')?.0.parse().ok()
}

/// Whether process `pid` is alive. Where `/proc` is missing it answers yes: nothing is removed.
fn alive(pid: u32) -> bool {
    pid == std::process::id() || !Path::new("/proc/self").exists() || {
        Path::new(&format!("/proc/{pid}")).exists()
    }
}

/// Removes the temporary files of processes that are gone (best effort: errors are ignored, the
/// write itself goes on).
fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if let Some(pid) = name.to_str().and_then(temp_pid) {
            if !alive(pid) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temps(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| temp_pid(n).is_some())
            .collect()
    }

    #[test]
    fn write_with_streams_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write_with(&p, |w| w.write_all(b"streamed")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"streamed");
        let failed = write_with(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("encoder failed"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"streamed");
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn writes_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write(&p, b"first").unwrap();
        write(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        assert!(temps(dir.path()).is_empty());
    }

    #[test]
    fn check_dir_finds_unusable_output_directories_first() {
        let dir = tempfile::tempdir().unwrap();
        check_dir(&dir.path().join("a/b")).unwrap();
        assert!(dir.path().join("a/b").is_dir() && temps(&dir.path().join("a/b")).is_empty());
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert!(check_dir(&file).is_err());
        assert!(check_dir(&file.join("sub")).is_err());
    }

    #[test]
    fn a_missing_directory_is_an_error_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/out.txt");
        assert!(write(&p, b"x").is_err());
        assert!(!p.exists());
    }

    #[test]
    fn temporary_files_of_dead_processes_are_removed_on_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        // A pid above the kernel's maximum (4194304) belongs to no process.
        let stale = dir.path().join(format!("{PREFIX}4294967-0{SUFFIX}"));
        fs::write(&stale, b"half").unwrap();
        let mine = dir
            .path()
            .join(format!("{PREFIX}{}-999999{SUFFIX}", std::process::id()));
        fs::write(&mine, b"in progress").unwrap();
        let other = dir.path().join(".occam-notes.tmp");
        fs::write(&other, b"not ours").unwrap();
        write(&dir.path().join("out.txt"), b"x").unwrap();
        if Path::new("/proc/self").exists() {
            assert!(!stale.exists(), "stale temporary file survived");
        }
        assert!(mine.exists() && other.exists());
    }

    #[cfg(unix)]
    #[test]
    fn mode_follows_the_umask_or_the_replaced_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        // What a plain create gives (0666 less the umask) is what a new output must get.
        let probe = dir.path().join("probe");
        File::create(&probe).unwrap();
        let umask_mode = fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        let p = dir.path().join("new.txt");
        write(&p, b"x").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            umask_mode
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write(&p, b"y").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}

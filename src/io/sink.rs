//! Output plumbing shared by the writers: [`AtomicFile`], a file written under a temporary
//! name in the destination's directory and renamed into place by [`AtomicFile::finish`]
//! (deleted if dropped before, or by [`remove_unfinished`] when the process is interrupted),
//! and [`Output`], which is either such a file or stdout for `-`.

use super::{Format, IoError, STDOUT_NAME};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Buffer size for file writers.
const BUF: usize = 1 << 16;

/// Distinguishes temporary files of one process.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// The temporary files of the [`AtomicFile`]s that are neither finished nor dropped, for
/// [`remove_unfinished`]. A file is added under the lock before it is created and taken out
/// under the lock when it is renamed or deleted, so the list never misses one.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished() -> MutexGuard<'static, Vec<PathBuf>> {
    // The list stays consistent whatever panicked while holding it (each change is one push
    // or one removal).
    UNFINISHED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Deletes the temporary file of every [`AtomicFile`] that is neither finished nor dropped,
/// and returns how many it deleted. For an interrupt handler, just before the process exits:
/// a signal ends a process without running destructors, which would leave the temporary
/// files behind. A file deleted here can no longer be finished ([`AtomicFile::finish`] then
/// fails), and a file finished before the call is left in place, complete.
///
/// ```
/// use lanecast::io::{AtomicFile, remove_unfinished};
///
/// let dir = std::env::temp_dir().join(format!("lanecast-unfinished-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let mut f = AtomicFile::create(dir.join("out.bin")).unwrap();
/// f.write_all(b"half").unwrap();
/// assert!(f.temp_path().exists());
/// assert!(remove_unfinished() >= 1); // (other threads' files too, in a program)
/// assert!(!f.temp_path().exists());
/// assert!(f.finish().is_err());
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn remove_unfinished() -> usize {
    let mut list = unfinished();
    let n = list.iter().filter(|p| std::fs::remove_file(p).is_ok()).count();
    list.clear();
    n
}

/// Temporary names tried before [`AtomicFile::create`] gives up (each is new: the sequence
/// number grows; only files left by a killed process of the same id can be in the way).
const TEMP_TRIES: u32 = 16;

/// A file that appears under its name only when complete.
///
/// [`create`](Self::create) opens a new temporary file `.NAME.tmp-PID-SEQ` in the
/// destination's directory (so the final rename never crosses file systems); writes go to it
/// through a 64 KiB buffer (the [`Write`] and [`Seek`] impls, or
/// [`write_all`](Self::write_all) with errors naming the file). [`finish`](Self::finish)
/// flushes, syncs the data to disk and renames the temporary file to `NAME`, replacing any
/// file of that name. Dropping an `AtomicFile` without finishing it (an error, a panic)
/// deletes the temporary file, so a failed run never leaves a file that looks complete, and
/// never touches an existing file of the destination's name. A process about to end on a
/// signal deletes the temporary files of every unfinished `AtomicFile` with
/// [`remove_unfinished`] (the `lanecast` command does, on Ctrl-C, SIGTERM and SIGHUP).
///
/// ```
/// use lanecast::io::AtomicFile;
///
/// let dir = std::env::temp_dir().join(format!("lanecast-atomic-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let dest = dir.join("out.txt");
///
/// let mut f = AtomicFile::create(&dest).unwrap();
/// f.write_all(b"hello").unwrap();
/// assert!(!dest.exists()); // not yet
/// f.finish().unwrap();
/// assert_eq!(std::fs::read(&dest).unwrap(), b"hello");
///
/// let mut g = AtomicFile::create(&dest).unwrap();
/// g.write_all(b"half a file").unwrap();
/// drop(g); // abandoned: the old file stays, the temporary file is gone
/// assert_eq!(std::fs::read(&dest).unwrap(), b"hello");
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    /// The destination as given, for error messages.
    name: String,
    dest: PathBuf,
    temp: PathBuf,
    /// `None` once renamed into place (nothing left to delete).
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file for `dest`. Errors (naming `dest`): `dest` is a directory or
    /// has no file name, or the temporary file cannot be created (a missing or unwritable
    /// directory).
    pub fn create(dest: impl AsRef<Path>) -> Result<Self, IoError> {
        let dest = dest.as_ref();
        let name = dest.display().to_string();
        if dest.is_dir() {
            return Err(IoError::new(&name, "is a directory, not a file"));
        }
        let Some(file_name) = dest.file_name() else {
            return Err(IoError::new(&name, "does not name a file"));
        };
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut tries = 0;
        loop {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(file_name);
            temp_name.push(format!(".tmp-{}-{}", std::process::id(), TEMP_SEQ.fetch_add(1, Ordering::Relaxed)));
            let temp = dir.join(temp_name);
            let mut list = unfinished();
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    list.push(temp.clone());
                    let file = Some(BufWriter::with_capacity(BUF, file));
                    return Ok(Self { name, dest: dest.to_path_buf(), temp, file });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries + 1 < TEMP_TRIES => tries += 1,
                Err(e) => {
                    let msg = format!("cannot create the temporary file {}: {e}", temp.display());
                    return Err(IoError::new(&name, msg));
                }
            }
        }
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// The temporary file being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The destination as errors name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// An error about this file: `cannot write: {e}`.
    fn write_err(&self, e: std::io::Error) -> IoError {
        IoError::new(&self.name, format!("cannot write: {e}"))
    }

    fn writer(&mut self) -> std::io::Result<&mut BufWriter<File>> {
        self.file.as_mut().ok_or_else(|| std::io::Error::other("the file is already finished"))
    }

    /// Appends `bytes`; an error names the file.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), IoError> {
        Write::write_all(self, bytes).map_err(|e| self.write_err(e))
    }

    /// Overwrites the first `head.len()` bytes already written with `head` (a header whose
    /// contents are known only at the end, such as a record count) and returns to the end.
    pub fn rewrite_start(&mut self, head: &[u8]) -> Result<(), IoError> {
        let r = (|| -> std::io::Result<()> {
            let w = self.writer()?;
            w.flush()?;
            let f = w.get_mut();
            f.seek(SeekFrom::Start(0))?;
            f.write_all(head)?;
            f.seek(SeekFrom::End(0))?;
            Ok(())
        })();
        r.map_err(|e| self.write_err(e))
    }

    /// Flushes, syncs and renames the temporary file to the destination. On error the
    /// temporary file is deleted and the destination is untouched.
    pub fn finish(mut self) -> Result<(), IoError> {
        let synced = (|| -> std::io::Result<()> {
            let w = self.writer()?;
            w.flush()?;
            w.get_ref().sync_all()
        })();
        synced.map_err(|e| self.write_err(e))?;
        let mut list = unfinished();
        let Some(at) = list.iter().position(|p| *p == self.temp) else {
            let msg = format!("the temporary file {} was removed by remove_unfinished", self.temp.display());
            return Err(IoError::new(&self.name, msg));
        };
        if let Err(e) = std::fs::rename(&self.temp, &self.dest) {
            let msg = format!("cannot rename the temporary file {} into place: {e}", self.temp.display());
            return Err(IoError::new(&self.name, msg));
        }
        list.swap_remove(at);
        // Renamed: nothing left to delete.
        self.file = None;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.writer()?.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer()?.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.writer()?.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(w) = self.file.take() {
            // Discard the unwritten buffer instead of flushing it into a doomed file.
            let (file, _) = w.into_parts();
            drop(file);
            let mut list = unfinished();
            if let Some(at) = list.iter().position(|p| *p == self.temp) {
                let _ = std::fs::remove_file(&self.temp);
                list.swap_remove(at);
            }
        }
    }
}

/// Where a writer's bytes go.
pub(crate) struct Output {
    name: String,
    kind: Kind,
}

enum Kind {
    Stdout(BufWriter<std::io::Stdout>),
    File(AtomicFile),
}

impl Output {
    /// Opens `path` (`-` is stdout, csv only) for `format`.
    pub(crate) fn create(path: &str, format: Format) -> Result<Self, IoError> {
        if path == "-" {
            super::source::check_stdio(path, format, STDOUT_NAME)?;
            return Ok(Self {
                name: STDOUT_NAME.to_string(),
                kind: Kind::Stdout(BufWriter::with_capacity(BUF, std::io::stdout())),
            });
        }
        Ok(Self { name: path.to_string(), kind: Kind::File(AtomicFile::create(path)?) })
    }

    /// The name errors use for this output (`<stdout>` for `-`).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Appends `bytes`.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<(), IoError> {
        match &mut self.kind {
            Kind::Stdout(w) => w.write_all(bytes).map_err(|e| IoError::new(&self.name, format!("cannot write: {e}"))),
            Kind::File(f) => f.write_all(bytes),
        }
    }

    /// Flushes, overwrites the start of the file with `head` when given (files only), syncs
    /// and renames the temporary file into place.
    pub(crate) fn finish(self, head: Option<&[u8]>) -> Result<(), IoError> {
        match self.kind {
            Kind::Stdout(mut w) => w.flush().map_err(|e| IoError::new(&self.name, format!("cannot write: {e}"))),
            Kind::File(mut f) => {
                if let Some(head) = head {
                    f.rewrite_start(head)?;
                }
                f.finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn finish_leaves_exactly_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.bin");
        let mut f = AtomicFile::create(&dest).unwrap();
        assert_eq!(f.path(), dest);
        assert_eq!(f.temp_path().parent(), Some(dir.path()), "the temporary file is beside the destination");
        f.write_all(b"0123456789").unwrap();
        assert!(!dest.exists(), "the destination appears before finish");
        f.rewrite_start(b"ab").unwrap();
        f.write_all(b"!").unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"ab23456789!");
        assert_eq!(names(dir.path()), ["a.bin"]);
    }

    #[test]
    fn finish_replaces_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.txt");
        std::fs::write(&dest, "old contents, longer").unwrap();
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"new").unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    #[test]
    fn dropping_without_finish_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.bin");
        let mut f = AtomicFile::create(&dest).unwrap();
        // More than the buffer, so some bytes reach the temporary file.
        f.write_all(&vec![7u8; 3 * BUF]).unwrap();
        let temp = f.temp_path().to_path_buf();
        assert!(temp.exists());
        drop(f);
        assert!(!temp.exists() && !dest.exists());
        assert!(names(dir.path()).is_empty());
        // An existing file of that name is left alone.
        std::fs::write(&dest, "keep").unwrap();
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"discard").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&dest).unwrap(), b"keep");
        assert_eq!(names(dir.path()), ["a.bin"]);
    }

    #[test]
    fn bad_destinations_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no such dir").join("x.png");
        let e = AtomicFile::create(&missing).unwrap_err();
        assert_eq!(e.path, missing.display().to_string());
        assert!(e.message.contains("cannot create the temporary file"), "{e}");
        let e = AtomicFile::create(dir.path()).unwrap_err();
        assert!(e.message.contains("is a directory"), "{e}");
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_temporary_name_in_the_way_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.bin");
        // Occupy the next few names this process would pick.
        let next = TEMP_SEQ.load(Ordering::Relaxed);
        for seq in next..next + 4 {
            std::fs::write(dir.path().join(format!(".a.bin.tmp-{}-{seq}", std::process::id())), "stale").unwrap();
        }
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"ok").unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"ok");
    }
}

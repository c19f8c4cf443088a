//! Output plumbing shared by the writers: a file written under a temporary name in the same
//! directory and renamed into place by [`Output::finish`] (deleted if dropped before), or
//! stdout for `-`.

use super::{Format, IoError, STDOUT_NAME};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Buffer size for file writers.
const BUF: usize = 1 << 16;

/// Distinguishes temporary files of one process.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Where a writer's bytes go.
pub(crate) struct Output {
    name: String,
    kind: Kind,
}

enum Kind {
    Stdout(BufWriter<std::io::Stdout>),
    File(TempFile),
}

/// A temporary file that becomes `dest` in [`Output::finish`] and is deleted if dropped first.
struct TempFile {
    dest: PathBuf,
    temp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(w) = self.file.take() {
            // Discard the unwritten buffer instead of flushing it into a doomed file.
            let (file, _) = w.into_parts();
            drop(file);
            let _ = std::fs::remove_file(&self.temp);
        }
    }
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
        let name = path.to_string();
        let dest = PathBuf::from(path);
        if dest.is_dir() {
            return Err(IoError::new(&name, "is a directory, not a file"));
        }
        let Some(file_name) = dest.file_name() else {
            return Err(IoError::new(&name, "does not name a file"));
        };
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        };
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(file_name);
        temp_name.push(format!(".tmp-{}-{}", std::process::id(), TEMP_SEQ.fetch_add(1, Ordering::Relaxed)));
        let temp = dir.join(temp_name);
        let file =
            OpenOptions::new().write(true).create_new(true).open(&temp).map_err(|e| {
                IoError::new(&name, format!("cannot create the temporary file {}: {e}", temp.display()))
            })?;
        Ok(Self { name, kind: Kind::File(TempFile { dest, temp, file: Some(BufWriter::with_capacity(BUF, file)) }) })
    }

    fn write_err(&self, e: std::io::Error) -> IoError {
        IoError::new(&self.name, format!("cannot write: {e}"))
    }

    /// Appends `bytes`.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<(), IoError> {
        let r = match &mut self.kind {
            Kind::Stdout(w) => w.write_all(bytes),
            Kind::File(t) => match t.file.as_mut() {
                Some(w) => w.write_all(bytes),
                None => Ok(()),
            },
        };
        r.map_err(|e| self.write_err(e))
    }

    /// Flushes, overwrites the start of the file with `head` when given (files only), syncs
    /// and renames the temporary file into place.
    pub(crate) fn finish(mut self, head: Option<&[u8]>) -> Result<(), IoError> {
        match &mut self.kind {
            Kind::Stdout(w) => w.flush().map_err(|e| self.write_err(e)),
            Kind::File(t) => {
                let Some(w) = t.file.as_mut() else {
                    return Ok(());
                };
                let done = (|| -> std::io::Result<()> {
                    w.flush()?;
                    let f = w.get_mut();
                    if let Some(head) = head {
                        f.seek(SeekFrom::Start(0))?;
                        f.write_all(head)?;
                    }
                    f.sync_all()
                })();
                if let Err(e) = done {
                    return Err(self.write_err(e));
                }
                if let Err(e) = std::fs::rename(&t.temp, &t.dest) {
                    let msg = format!("cannot rename the temporary file {} into place: {e}", t.temp.display());
                    return Err(IoError::new(&self.name, msg));
                }
                // Renamed: nothing left to delete.
                t.file = None;
                Ok(())
            }
        }
    }
}

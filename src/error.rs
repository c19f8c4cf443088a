//! Error types. Scene errors name the geometry (and, for files, the file and place).

use std::path::PathBuf;

/// Why a scene could not be built or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A shape handed to the builder is invalid.
    #[error("geometry {geom}: {what}")]
    InvalidShape {
        /// Geometry id it would have had.
        geom: u32,
        /// What is wrong.
        what: String,
    },
    /// A file could not be read or parsed; `place` is `line:column` or a record when known.
    #[error("{}{}: {message}", path.display(), place.as_ref().map(|p| format!(":{p}")).unwrap_or_default())]
    File {
        /// The file.
        path: PathBuf,
        /// `line:column`, `line N` or similar, when known.
        place: Option<String>,
        /// What is wrong.
        message: String,
    },
}

impl SceneError {
    /// A file error without a position.
    pub fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        SceneError::File { path: path.into(), place: None, message: message.into() }
    }
    /// A file error at a position.
    pub fn at(path: impl Into<PathBuf>, place: impl Into<String>, message: impl Into<String>) -> Self {
        SceneError::File { path: path.into(), place: Some(place.into()), message: message.into() }
    }
}

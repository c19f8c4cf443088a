//! Error types, all `thiserror` enums: [`SceneError`] (building or loading a scene; names the
//! geometry, and for files the file and place) and [`LimitError`] (a count past what ids or
//! tree references can hold).

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
    /// An instance's id or transform is invalid.
    #[error("instance {inst}: {what}")]
    InvalidInstance {
        /// Instance id (the one it would have had, for a new one).
        inst: u32,
        /// What is wrong.
        what: String,
    },
    /// A count is past what ids or trees can hold.
    #[error("{what}: {source}")]
    Limit {
        /// What was being added or built (e.g. `triangles`).
        what: &'static str,
        /// The limit that was hit.
        #[source]
        source: LimitError,
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

/// A count past what lanecast can index. Returned instead of wrapping ids silently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// More primitives of one kind than a BVH can index (`bvh::MAX_PRIMITIVES`, 2^27).
    #[error("{count} primitives of one kind, more than a BVH can index ({max})")]
    TooManyPrimitives {
        /// Primitives given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// More geometries than u32 ids can name (`u32::MAX` is the miss id).
    #[error("{count} geometries, more than u32 ids can name ({max})")]
    TooManyGeometries {
        /// Geometries there would be.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// More instances than u32 ids can name (`u32::MAX` means "not instanced").
    #[error("{count} instances, more than u32 ids can name ({max})")]
    TooManyInstances {
        /// Instances there would be.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// More primitives in one geometry than u32 primitive ids can name.
    #[error("{count} primitives in one geometry, more than u32 ids can name ({max})")]
    TooManyInGeometry {
        /// Primitives given.
        count: usize,
        /// The limit.
        max: usize,
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

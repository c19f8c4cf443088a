"""Type stubs of the compiled module ``lanecast._lanecast`` (use the ``lanecast`` package instead).

Arrays passed here must already be C-contiguous: float32 ``(n, 6|8)`` rays, ``(n, 3)`` points,
geometry records as ``lanecast.Scene`` keeps them. ``nthreads = 0`` means all cores.
"""

from typing import List, Optional, Tuple

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
Bool = npt.NDArray[np.bool_]
HitArrays = Tuple[F32, U32, U32, F32, F32]
Record = Tuple[str, F32, Optional[U32]]
CameraTuple = Tuple[List[float], List[float], List[float], float, int, int]

#: The instruction set the lanes were compiled for.
SIMD: str

def invalid_id() -> int:
    """``2**32 - 1``, the id of a miss."""

def _pool_id(nthreads: int) -> int:
    """The pool a query with ``nthreads`` runs on from the calling thread (0: the global pool);
    pools belong to the calling thread."""

def check_geometry(kind: str, a: F32, b: Optional[U32] = None) -> None:
    """Raises ``ValueError`` if the record would be rejected by ``build``."""

def build(geometries: List[Record], triangle_test: str = "watertight", quality: str = "medium") -> Built:
    """Builds the BVHs of the records (GIL released)."""

def load_scene(path: str) -> Tuple[List[Record], Optional[CameraTuple]]:
    """A TOML scene file's geometry records (meshes as soups) and camera."""

def default_scene() -> Tuple[List[Record], Optional[CameraTuple]]:
    """The built-in default scene's records and camera."""

def load_mesh(path: str) -> Tuple[F32, U32]:
    """An OBJ/PLY mesh as ``(vertices (n, 3), triangles (m, 3))``."""

class Built:
    """A built, immutable scene; every query releases the GIL."""

    def geometry_count(self) -> int:
        """Number of geometries."""
    def bounds(self) -> Tuple[List[float], List[float]]:
        """``(min, max)`` of the bounded geometries."""
    def cast_rays(self, rays: F32, nthreads: int) -> HitArrays:
        """``(t_hit, geometry_ids, primitive_ids, primitive_uvs, primitive_normals)``."""
    def test_occlusions(self, rays: F32, tnear: float, tfar: float, nthreads: int) -> Bool:
        """Any hit in the interval."""
    def line_of_sight(self, a: F32, b: F32, nthreads: int) -> Bool:
        """Whether ``a[i]`` sees ``b[i]``."""
    def count_intersections(self, rays: F32, nthreads: int) -> U32:
        """Crossings per ray."""
    def list_intersections(self, rays: F32, nthreads: int) -> Tuple[U64, U64, HitArrays]:
        """``(ray_splits, ray_ids, hits)``."""
    def compute_closest_points(self, query_points: F32, nthreads: int) -> Tuple[F32, HitArrays]:
        """``(points, (distance, geometry_ids, primitive_ids, uvs, normals))``."""
    def compute_distance(self, query_points: F32, signed: bool, nthreads: int) -> F32:
        """Distance to the nearest surface, negative inside when ``signed``."""
    def contains(self, query_points: F32, nthreads: int) -> Bool:
        """Inside by crossing parity (solid spheres and boxes)."""
    def rust_batch_seconds(self, rays: F32, occlusion: bool, nthreads: int) -> float:
        """Seconds of the Rust batch API on these rays."""

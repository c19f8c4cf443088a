#!/usr/bin/env bash
# The peers bench with Embree 4: installs the `embreex` wheel (which ships libembree4 and its
# TBB) into a virtualenv under the cargo target dir, points LANECAST_EMBREE_LIB at its
# libembree4, and runs `cargo bench -p lanecast-peers --features embree --bench peers` with
# the arguments given (e.g. `-- peers_bunny`).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${CARGO_TARGET_DIR:-target}/embree-venv"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check embreex==4.4.0.post1
fi
lib="$(ls "$venv"/lib/python3*/site-packages/embreex.libs/libembree4*.so* | head -n 1)"
LANECAST_EMBREE_LIB="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
export LANECAST_EMBREE_LIB
echo "Embree: $LANECAST_EMBREE_LIB"
exec cargo bench -p lanecast-peers --features embree --bench peers "$@"

#!/usr/bin/env bash
# The test command: makes sure a Vulkan driver is there (lavapipe on a machine without a GPU), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# install.sh put ffprobe there: the MP4 tests read their files back with it rather than skip that check.
export SPLATSORT_NEED_FFPROBE=1
# A GPU machine keeps its own adapter; on a CPU-only machine wgpu finds lavapipe through Vulkan.
cargo test --locked --workspace "$@"
# The sort crate's example: another wgpu program's buffers sorted and checked against the CPU.
cargo run --locked -p splatsort-sort --example foreign_buffers

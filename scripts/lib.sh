# SPDX-License-Identifier: GPL-2.0
# Common helpers for rrxe scripts. Source it; do not run it.
#
# All state lives in $RRXE_CACHE (default ~/.cache/rrxe), never in the repo.

RRXE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RRXE_CACHE=${RRXE_CACHE:-$HOME/.cache/rrxe}
export RRXE_ROOT RRXE_CACHE

# Pinned tool versions (the recipe in shared/notes/pipeline.md was measured with these).
BINDGEN_VERSION=0.72.1
VNG_VERSION=1.42
LLVM_MAJOR=19
KERNEL_SERIES=7.2

rrxe_log() { printf 'rrxe: %s\n' "$*" >&2; }
rrxe_die() { printf 'rrxe: error: %s\n' "$*" >&2; exit 1; }

# step NAME CMD...: run CMD, then print one line with what it did and how long it took. With
# RRXE_TIMES set (scripts/check does), also append "NAME SECONDS" to that file for the timing
# table at the end of the run.
step() {
	local name=$1 t0 t1 rc
	shift
	t0=$(date +%s.%N)
	"$@"
	rc=$?
	t1=$(date +%s.%N)
	awk -v n="$name" -v rc=$rc -v t0="$t0" -v t1="$t1" 'BEGIN {
		printf "rrxe: [%-14s] %s in %.1f s\n", n, (rc == 0 ? "done" : "FAILED (rc " rc ")"), t1 - t0 }' >&2
	[ -z "${RRXE_TIMES:-}" ] ||
		awk -v n="$name" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%s %.1f\n", n, t1 - t0 }' \
			>>"$RRXE_TIMES" || true
	return $rc
}

# The toolchain environment for kernel and module builds.
rrxe_env() {
	export PATH="$RRXE_CACHE/venv/bin:$RRXE_CACHE/bindgen/bin:$HOME/.cargo/bin:$PATH"
	export LIBCLANG_PATH=/usr/lib/llvm-$LLVM_MAJOR/lib
	export RUST_LIB_SRC="$RRXE_CACHE/rust-src/usr/lib/rustlib/src/rust/library"
	export KBUILD_BUILD_TIMESTAMP=2026-01-01 KBUILD_BUILD_USER=rrxe KBUILD_BUILD_HOST=rrxe
}

# Kernel build directory of a flavour (fast|debug).
rrxe_kdir() { echo "$RRXE_CACHE/kernel-$1"; }

# make arguments for a flavour: the debug kernel is clang-built (Rust + KASAN need clang).
rrxe_kmake_args() {
	case $1 in
	fast) echo "" ;;
	debug) echo "LLVM=-$LLVM_MAJOR" ;;
	*) rrxe_die "unknown flavour '$1' (fast|debug)" ;;
	esac
}

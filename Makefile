# SPDX-License-Identifier: GPL-2.0
#
# rrxe: build with the kernel's build system (kernel-style M= module build).
#
#   make                    build rrxe.ko against $(KDIR)
#   make CLIPPY=1           ... with clippy
#   make clippy             same as CLIPPY=1
#   make rustfmt            format the Rust sources; rustfmtcheck to check only
#   make rust-analyzer      write rust-project.json
#   make modules_install    install into /lib/modules/$(uname -r)/extra
#   make check              the whole test suite (host tests, KUnit and selftests in VMs)
#   make check-full         ... with every selftest on the debug kernel, without a time budget
#   make soak               the adversarial tests over and over for SOAK_MINUTES (default 30)
#   make demo               ibv_devinfo on an rrxe device in a VM
#   make bench              perftest, NVMe-oF on C rxe and rrxe: one VM (loopback, veth), then
#                           two VMs on a wire; table, CSV, a PNG per family (RRXE_BENCH_RUNS,
#                           default 5 runs; about 46 minutes)
#
# KDIR defaults to the running kernel's build tree when it has Rust support, else to the
# cached test kernel (scripts/build-kernel); LLVM=-19 is passed for the debug flavour.

KVER ?= $(shell uname -r)
FLAVOUR ?= fast
RRXE_CACHE ?= $(HOME)/.cache/rrxe
ifeq ($(wildcard /lib/modules/$(KVER)/build/rust/libkernel.rmeta),)
KDIR ?= $(RRXE_CACHE)/kernel-$(FLAVOUR)
else
KDIR ?= /lib/modules/$(KVER)/build
endif
ifeq ($(FLAVOUR),debug)
LLVM ?= -19
export LLVM
endif

# The toolchain environment of scripts/setup (bindgen, rust-src, libclang), when present.
ifneq ($(wildcard $(RRXE_CACHE)/bindgen/bin/bindgen),)
export PATH := $(RRXE_CACHE)/bindgen/bin:$(HOME)/.cargo/bin:$(PATH)
export LIBCLANG_PATH ?= /usr/lib/llvm-19/lib
export RUST_LIB_SRC ?= $(RRXE_CACHE)/rust-src/usr/lib/rustlib/src/rust/library
endif

SOAK_MINUTES ?= 30

RUST_SOURCES = $(shell find rust tests/host/src -name '*.rs' -not -name '*_generated.rs')

.PHONY: all modules clean modules_install clippy rustfmt rustfmtcheck rust-analyzer check demo \
	host-test bench check-full soak

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clippy:
	$(MAKE) -C $(KDIR) M=$(CURDIR) CLIPPY=1 modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f rust/bindings/bindings_generated.rs

modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

rustfmt:
	rustfmt --edition 2021 $(RUST_SOURCES)

rustfmtcheck:
	rustfmt --edition 2021 --check $(RUST_SOURCES)

rust-analyzer:
	$(MAKE) -C $(KDIR) M=$(CURDIR) rust-analyzer

host-test:
	cd tests/host && cargo test --quiet

check:
	scripts/check

check-full:
	RRXE_CHECK_FULL=1 scripts/check

soak:
	scripts/soak $(SOAK_MINUTES)

demo:
	scripts/demo

bench:
	scripts/bench

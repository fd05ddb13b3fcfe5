# btl_ft: entry points for people and CI. `make demo` and `make test` are
# the two set-up commands of the README; everything else is a step they use.
#
#   make deps     install build and test dependencies (apt, as root)
#   make ompi     patched Open MPI with the btl_ft detector -> build/ompi
#   make stock    unpatched Open MPI 5.0.7 -> build/ompi-stock
#   make demo     run a ULFM program, inject a failure, print the timings
#   make ftsim    the simulator and the eta/delta advisor -> build/core/sim/{ftsim,fttune}
#   make install PREFIX=/opt/btl_ft
#                 the patched Open MPI built for PREFIX, fttune, ftsim, the docs and
#                 module files for Lmod and Environment Modules (PREFIX/share/modulefiles)
#   make test     every test through ctest (SLOW=1 adds the slow label; BTL=sm|tcp|uct|ofi
#                 runs the MPI tests over one transport, uct:DOMAINS and ofi:PROVIDER a variant)
#   make bench    benchmarks against stock 5.0.7 -> benchmarks/RESULTS.md (about 2.5 h here: each stage's time is in RESULTS)
#   make bench-quick  the same code paths, fewer sizes and repetitions (< 10 min)
#   make clean    remove build/

SHELL := /bin/bash
ROOT  := $(CURDIR)
BUILD := $(ROOT)/build
CORE_LIB := $(BUILD)/core/libbtl_ft_core.a
OMPI_STAMP  := $(BUILD)/ompi/.btl_ft-installed
STOCK_STAMP := $(BUILD)/ompi-stock/.btl_ft-installed
DEPS_STAMP  := $(BUILD)/.deps-ok
JOBS ?= $(shell nproc)
SLOW ?= 0
# BTL=sm|tcp|uct[:domains]|ofi[:provider] runs the MPI tests and benchmarks over
# that transport (mpijobs/mpirun.py, transport_mca); OFI_PROVIDER picks
# btl/ofi's provider when BTL=ofi names none.
export BTL OFI_PROVIDER
# The Python scripts of tests/ and benchmarks/ import the package mpijobs
# (and benchmarks.*, tests.*) from the repository's root.
export PYTHONPATH := $(ROOT)$(if $(PYTHONPATH),:$(PYTHONPATH))

CORE_SOURCES := $(shell find btl_ft/src btl_ft/include -type f) btl_ft/CMakeLists.txt
OMPI_INPUTS  := $(shell find patches ompi-overlay -type f 2>/dev/null) ci/build-ompi.sh ci/common.sh ci/core-la.sh

.PHONY: all deps core ftsim ompi stock install demo test bench bench-quick clean
all: ompi

deps: $(DEPS_STAMP)
$(DEPS_STAMP): ci/deps.sh
	ci/deps.sh
	@mkdir -p $(BUILD) && touch $@

# The core archive linked into libmpi: release flags, no sanitizers.
core: $(CORE_LIB)
$(CORE_LIB): $(CORE_SOURCES) ci/core-la.sh | $(DEPS_STAMP)
	cmake -S btl_ft -B $(BUILD)/core -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
	cmake --build $(BUILD)/core --target btl_ft_core -j $(JOBS)
	ci/core-la.sh $@
	@touch $@

# The simulator and the eta/delta advisor, release build, beside the core:
# build/core/sim/ftsim and build/core/sim/fttune
ftsim: $(CORE_LIB)
	cmake --build $(BUILD)/core --target ftsim fttune -j $(JOBS)

ompi: $(OMPI_STAMP)
$(OMPI_STAMP): $(CORE_LIB) $(OMPI_INPUTS) | $(DEPS_STAMP)
	BTL_FT_JOBS=$(JOBS) ci/build-ompi.sh patched
	@touch $@

stock: $(STOCK_STAMP)
$(STOCK_STAMP): ci/build-ompi.sh ci/common.sh | $(DEPS_STAMP)
	BTL_FT_JOBS=$(JOBS) ci/build-ompi.sh stock
	@touch $@

# A separate tree (build/openmpi-install), configured with --prefix=PREFIX, so
# the installed Open MPI never reads build/: ci/install.sh
install: ftsim | $(DEPS_STAMP)
	BTL_FT_JOBS=$(JOBS) BTL_FT_PREFIX="$(PREFIX)" ci/install.sh

demo: ompi
	ci/demo.sh

test: ompi
	cmake -S tests -B $(BUILD)/tests -DBTL_FT_SANITIZE=ON -DOMPI_PREFIX=$(BUILD)/ompi \
	      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
	cmake --build $(BUILD)/tests -j $(JOBS)
	cd $(BUILD)/tests && ctest --output-on-failure --timeout 600 \
	    $(if $(filter 1,$(SLOW)),-LE known_rare_failure,-LE 'slow|known_rare_failure')

# Debian's python3 carries matplotlib (python3-matplotlib); a pyenv python may not.
BENCH_PYTHON ?= /usr/bin/python3
bench: ompi stock ftsim
	$(BENCH_PYTHON) benchmarks/run_all.py

bench-quick: ompi stock ftsim
	$(BENCH_PYTHON) benchmarks/run_all.py --quick

clean:
	rm -rf $(BUILD)

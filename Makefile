# snarl: make demo | make test | make validate | make bench | make lint
#
# Needs only cargo, python3 (>= 3.10) and pip. The Python environment lives in .venv;
# stamp files there keep repeated runs from reinstalling or rebuilding what is current.

PYTHON ?= python3
CARGO ?= cargo
VENV := .venv
VPY := $(VENV)/bin/python
DEMO ?= scenarios/demo/endpoint-congestion.toml scenarios/demo/endpoint-congestion-dragonfly.toml
DEMO_OUT ?= out/demo
PYTEST_ARGS ?=

# Everything the extension module is built from.
RUST_SOURCES := $(shell find crates bindings/python/src -name '*.rs' 2>/dev/null) \
	Cargo.toml Cargo.lock crates/snarl-core/Cargo.toml \
	bindings/python/Cargo.toml bindings/python/pyproject.toml

.PHONY: all setup build test test-rust test-python validate demo bench lint clean

all: build

## setup: the virtualenv with pinned dev dependencies and the snarl package (release build)
setup: $(VENV)/.snarl-built

$(VPY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.deps-installed: requirements-dev.txt constraints.txt | $(VPY)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# maturin develop builds the extension into bindings/python/python/snarl and installs
# the package in editable mode: Python sources are picked up without rebuilding.
$(VENV)/.snarl-built: $(VENV)/.deps-installed $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet \
		--manifest-path bindings/python/Cargo.toml
	touch $@

## build: the Python package (as above) and the Rust binaries
build: setup
	$(CARGO) build --release

## test: Rust tests of the core, then the Python tests
test: setup test-rust test-python

# SNARL_PYTHON: the interpreter with the package, through which the Rust tests show
# that what a mechanism made outside the crate reaches Python's Report.
test-rust: setup
	SNARL_PYTHON=$(abspath $(VPY)) $(CARGO) test --release

test-python: setup
	$(VPY) -m pytest bindings/python/tests $(PYTEST_ARGS)

## validate: the papers' experiments at full length (about half an hour on 2 cores), each
## figure printed beside the paper's and written to out/validate/figures.md, which
## docs/validation.md quotes. Runs are cached: an interrupted validation resumes.
## VALIDATE_ARGS: e.g. --only endpoint, --quick (shortened, to check the machinery).
VALIDATE_ARGS ?=
validate: setup
	$(VPY) -m validation $(VALIDATE_ARGS)

## demo: the flagship sweeps (endpoint congestion on a fat-tree and a Dragonfly) on every
## core, then one HTML report of them in $(DEMO_OUT)/report.html. DEMO: sweep files (each
## into $(DEMO_OUT)/<name>), or a single experiment, which is run and printed.
demo: setup
	@set -e; sweeps=""; \
	for file in $(DEMO); do \
		if grep -q '^base *=' "$$file"; then \
			out="$(DEMO_OUT)/$$(basename "$$file" .toml)"; \
			$(VENV)/bin/snarl sweep "$$file" --out "$$out"; \
			sweeps="$$sweeps $$out"; \
		else \
			$(VENV)/bin/snarl run "$$file"; \
		fi; \
	done; \
	if [ -n "$$sweeps" ]; then \
		$(VENV)/bin/snarl report $$sweeps -o $(DEMO_OUT)/report.html >/dev/null; \
		echo "report: $(abspath $(DEMO_OUT))/report.html"; \
	fi

## bench: simulated packet-hops per wall second and peak memory (bench/results.md)
bench:
	$(CARGO) build --release -p snarl-core --bin snarl-bench
	bash ./bench/run.sh

## lint: formatting and clippy (both run; fails if either complains)
lint:
	status=0; \
	$(CARGO) fmt --all --check || status=1; \
	if $(CARGO) clippy --version >/dev/null 2>&1; then \
		PYO3_PYTHON=$(PYTHON) $(CARGO) clippy --workspace --all-targets --release -- -D warnings || status=1; \
	else echo "cargo clippy is not installed: skipped"; fi; \
	exit $$status

clean:
	rm -rf $(VENV) bindings/python/python/snarl/*.so
	$(CARGO) clean

# The two commands of the README: `make demo` and `make test`. Both install what they need
# (scripts/setup), configure and build in build/ (Release), then do their job.
BUILD ?= build
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all setup configure build demo test bench parity fuzz format clean

all: build

setup:
	@scripts/setup

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: build
	@scripts/bench

# Side by side with OSU Micro-Benchmarks (not part of collbench): make parity OSU=<osu-bin folder
# or archive> [PARITY_ARGS="--rounds 5 --ranks 2,4"].
parity: build
	@test -n "$(OSU)" || { echo "make parity: give OSU=<folder with osu_latency, or the OSU archive>" >&2; exit 2; }
	@scripts/parity --osu "$(OSU)" --collbench $(BUILD)/collbench $(PARITY_ARGS)

fuzz: setup
	@scripts/fuzz

format:
	@scripts/format

clean:
	rm -rf $(BUILD)

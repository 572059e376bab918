# The two commands of the README: `make demo` and `make test`. Each installs what its purpose
# needs (scripts/setup demo|test), configures build/ (Release) and builds what it uses: the demo
# the three tools alone, the tests everything.
BUILD ?= build
JOBS ?= $(shell nproc)
# Tests at once: one per core, and beside them the suite's three long chains (tests/CMakeLists.txt).
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 3 )))
CTEST_ARGS ?=
CMAKE_ARGS ?=
TOOLS = collbench collbench-sweep collbench-report

.PHONY: all setup configure build tools demo test bench parity fuzz format clean

all: build

setup:
	@scripts/setup test

# Configured with the test suite and the benchmarks of collbench itself, or (the demo) without:
# their libraries (GoogleTest, Google Benchmark) are then not needed at all.
configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_BUILD_TESTS=ON \
	  -DCOLLBENCH_BUILD_BENCHMARKS=ON $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

tools:
	@scripts/setup demo
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_BUILD_TESTS=OFF \
	  -DCOLLBENCH_BUILD_BENCHMARKS=OFF $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target $(TOOLS)

demo: tools
	@scripts/demo

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS) $(CTEST_ARGS)

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

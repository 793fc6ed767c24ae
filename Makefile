# mig-gpu-mon — build, test, install.
#   make                 the monitor ./mig-gpu-mon and the simulator sim/libnvidia-ml.so.1
#   make check           -Werror build, unit tests, end-to-end tests, then the unit
#                        and end-to-end tests again under ASan+UBSan
#   make install PREFIX=/usr/local DESTDIR=
VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CSTD := -std=c11 -D_GNU_SOURCE
OPT ?= -O2 -g
SANFLAGS :=
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1 -g
endif
CFLAGS_ALL := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -Isrc -DMIGMON_VERSION=\"$(VERSION)\" \
	-DMIGMON_LIBDIR=\"$(PREFIX)/lib/mig-gpu-mon\" $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)
LIBS := -lncursesw -ldl -lm -pthread

SRC := $(sort $(wildcard src/*.c src/backend/*.c src/system/*.c src/export/*.c src/tui/*.c))
LIB_SRC := $(filter-out src/main.c,$(SRC))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
BIN := $(BUILD)/mig-gpu-mon

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# The simulator: its sources and rules live in sim/sim.mk.
SIM_DIR := $(BUILD)/sim
include sim/sim.mk

.PHONY: all check unit e2e san-check valgrind-check install uninstall clean format
all: $(BIN) $(SIM_LIB)
ifeq ($(BUILD),build)
all: mig-gpu-mon sim/libnvidia-ml.so.1
mig-gpu-mon: $(BIN)
	cp $< $@
sim/libnvidia-ml.so.1: $(SIM_LIB)
	cp $< $@
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libmigmon.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BIN): $(MAIN_OBJ) $(BUILD)/libmigmon.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libmigmon.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(TEST_LDFLAGS_$*) -lcmocka $(LIBS)

# The allocation test counts the library's heap calls through --wrap.
TEST_LDFLAGS_test_collect := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
TEST_LDFLAGS_test_history := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

# Environment every test gets: where the built binary and simulator are.
TEST_ENV := MIGMON_BIN=$(CURDIR)/$(BIN) MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) \
	MIGMON_SIM_DIR=$(CURDIR)/$(SIM_DIR) MIGMON_SRC=$(CURDIR)

unit: $(BIN) $(UNIT_BIN) $(SIM_ALL)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $(TEST_ENV) $$t; done

e2e: $(BIN) $(SIM_ALL)
	@$(TEST_ENV) tests/e2e/run.sh

san-check:
	$(MAKE) BUILD=build-san SAN=1 unit e2e

# A short soak of the real binary under valgrind: every scenario, no error,
# no leak (the simulator's own allocations included).
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
valgrind-check: $(BIN) $(SIM_ALL)
	@set -e; for s in sim/scenarios/*.ini; do echo "== valgrind $$s"; \
		MIGMON_SIM_SCENARIO=$$s MIGMON_SIM_TIME=100 $(VALGRIND) $(BIN) --once --format json \
			--nvml-path $(SIM_LIB) >/dev/null; done; \
		echo "== valgrind without a driver"; $(VALGRIND) $(BIN) --once >/dev/null; \
		echo "== valgrind of the interactive monitor"; $(TEST_ENV) tests/e2e/tui_valgrind.sh

check: all
	$(MAKE) unit
	$(MAKE) e2e
	$(MAKE) valgrind-check
	$(MAKE) san-check
	@echo "make check: all suites passed"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/scenarios
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mig-gpu-mon
	install -m 0644 man/mig-gpu-mon.1 $(DESTDIR)$(PREFIX)/share/man/man1/mig-gpu-mon.1
	install -m 0755 $(SIM_LIB) $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/libnvidia-ml.so.1
	install -m 0644 sim/scenarios/*.ini $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/scenarios/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mig-gpu-mon $(DESTDIR)$(PREFIX)/share/man/man1/mig-gpu-mon.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon

clean:
	rm -rf build build-san mig-gpu-mon sim/libnvidia-ml.so.1

format:
	clang-format -i $(SRC) $(wildcard src/*/*.h src/*.h sim/*.c sim/*.h tests/unit/*.c)

-include fuzz/fuzz.mk
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Benchmarks (not part of check): make bench
$(BUILD)/bench_tick: bench/bench_tick.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) \
		-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc $(LIBS)
$(BUILD)/bench_draw: bench/bench_draw.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) \
		-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc $(LIBS)
.PHONY: bench
bench: $(BIN) $(BUILD)/bench_tick $(BUILD)/bench_draw $(SIM_ALL)
	@for s in a100-sxm4-80gb h100-pcie-mig-535 dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_tick sim/scenarios/$$s.ini 2000; done
	@echo "== with the GPM helper (sampling every 100 ms)"
	@for s in h100-pcie-mig-535 h200-mig; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) MIGMON_BENCH_GPM_EXE=$(CURDIR)/$(BIN) \
			$(BUILD)/bench_tick sim/scenarios/$$s.ini 20000; done
	@for s in a100-sxm4-80gb dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_draw sim/scenarios/$$s.ini 1000; done

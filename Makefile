# mig-gpu-mon — build, test, install.
#   make                 the monitor ./mig-gpu-mon and the simulator beside it (sim/:
#                        libnvidia-ml.so.1 and libdcgm.so.4, which --demo loads)
#   make test            -Werror build, unit tests, end-to-end tests (./test.sh)
#   make check-full      the short soak, valgrind, then the unit and end-to-end
#                        tests again under ASan+UBSan (san-check) and under
#                        ThreadSanitizer (tsan-check) (./test.sh --full)
#   make check           both
#   make install PREFIX=/usr/local DESTDIR=
#   make portable        build-portable/mig-gpu-mon: one stripped binary that needs
#                        only glibc (docs/portable.md)
#   make dist            build-portable/mig-gpu-mon-VERSION-linux-ARCH.tar.gz
#   make image           the OCI image mig-gpu-mon:VERSION (buildah, from scratch)
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
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
OPT := -O1 -g
endif
# SAN=thread: ThreadSanitizer alone (it cannot be combined with ASan).
# Its options are also compiled into every program of the build
# (__tsan_default_options, $(BUILD)/tsan_defaults.o), because some test runs
# start with an empty environment (the TUI tests: env -i) and the GPM helper's
# stderr is /dev/null: reports go to files under $(BUILD)/tsan-logs, which
# tsan-check prints and fails on. TSAN_OPTIONS, when set, still wins.
# atexit_sleep_ms=0: TSan otherwise sleeps 1 s at exit while another thread
# is alive, and the monitor by design leaves a thread stuck in the driver
# behind (nvml_workers.c: root_close), which the tests' exit-time limits see.
# $(call TSAN_OPTS,BUILD-DIR)
TSAN_OPTS = halt_on_error=1:second_deadlock_stack=1:exitcode=66:atexit_sleep_ms=0:log_path=$(CURDIR)/$(1)/tsan-logs/report
TSAN_OBJ :=
ifeq ($(SAN),thread)
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT := -O1 -g
TSAN_OBJ := $(BUILD)/tsan_defaults.o
endif
# PORTABLE=1 (make portable sets it, in its own build directory): ncursesw,
# tinfo, inih, zlib and zstd linked statically, glibc dynamically (NVML, DCGM and
# libmicrohttpd are dlopen()ed, which a static glibc cannot do well);
# stripped, without debug information.
PORTABLE ?=
BUILD_KIND :=
ifeq ($(PORTABLE),1)
OPT := -O2
BUILD_KIND := -DMIGMON_PORTABLE=1
endif
CFLAGS_ALL := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -Isrc -Iinclude -DMIGMON_VERSION=\"$(VERSION)\" $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)
LIBS := -lncursesw -linih -ldl -lm -pthread
ifeq ($(PORTABLE),1)
LIBS := -Wl,-Bstatic -lncursesw -ltinfo -linih -lz -lzstd -Wl,-Bdynamic -ldl -lm -pthread
endif

# One folder per kind (src/README.md); the data sources one folder deeper
# under src/backend/.
SRC := $(sort $(wildcard src/*.c src/*/*.c src/*/*/*.c))
LIB_SRC := $(filter-out src/main.c,$(SRC))
# The built-in terminfo entries (src/tui/terminfo_builtin.h), compiled with
# tic from this machine's terminfo when the binary is built.
TERMINFO_BUILTIN := xterm xterm-256color screen screen-256color tmux tmux-256color linux vt100
TERMINFO_OBJ := $(BUILD)/gen/terminfo_data.o
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(TERMINFO_OBJ)
MAIN_OBJ := $(BUILD)/src/main.o
BIN := $(BUILD)/mig-gpu-mon

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# The exporter (src/serve/serve.c): gzip. libmicrohttpd is opened when a server
# starts (dlopen; its header is a build dependency), not linked. Recordings
# (src/app/recout.c, src/backend/replay/): gzip and zstd.
ifneq ($(PORTABLE),1)
LIBS += -lz -lzstd
endif
# The replay mode (src/app/replay_mode.c, src/backend/replay/) and the fleet
# backend (src/backend/prometheus/, --prometheus) read JSON with jansson, linked (statically in the portable
# build). The fleet's libcurl is opened when a fleet view starts (dlopen;
# its header is a build dependency), not linked.
ifeq ($(PORTABLE),1)
LIBS := -Wl,-Bstatic -ljansson -Wl,-Bdynamic $(LIBS)
else
LIBS += -ljansson
endif

# The simulator: its sources and rules live in sim/sim.mk.
SIM_DIR := $(BUILD)/sim
include sim/sim.mk

.PHONY: all test check check-full unit e2e san-check tsan-check valgrind-check install uninstall clean format
all: $(BIN) $(SIM_LIB) $(SIM_DCGM_LIBS)
ifeq ($(SAN),)
all: lib
endif
# ./mig-gpu-mon --demo finds the simulator in sim/ beside it, and the
# simulated DCGM beside that (demo_dcgm_lib): without libdcgm.so.4 there,
# every A100 MIG instance of the demo has no activity ("DCGM not installed").
ifeq ($(BUILD),build)
all: mig-gpu-mon sim/libnvidia-ml.so.1 sim/libdcgm.so.4
mig-gpu-mon: $(BIN)
	cp $< $@
sim/libnvidia-ml.so.1: $(SIM_LIB)
	cp $< $@
sim/libdcgm.so.4: $(SIM_DIR)/libdcgm.so.4
	cp $< $@
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/gen/terminfo_data.c: scripts/embed-terminfo.sh
	@mkdir -p $(dir $@)
	scripts/embed-terminfo.sh $@ $(TERMINFO_BUILTIN)
$(TERMINFO_OBJ): $(BUILD)/gen/terminfo_data.c src/tui/terminfo_builtin.h
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# Made afresh: ar r keeps the members of sources that moved or went away.
$(BUILD)/libmigmon.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The public C library (include/migmon.h, docs/library.md): the sampling
# core without the UI, position-independent, every symbol hidden but the
# migmon_ API (visibility and src/app/libmigmon.map); libmigmon.so.0 and a
# static libmigmon.a made of one relocatable object with the internals
# localised. Built in $(BUILD)/pub.
PUB_SRC := src/app/libmigmon.c src/app/watch.c src/engine/engine.c src/engine/collect.c src/core/clock.c src/core/debuglog.c src/engine/health.c src/core/model.c \
	src/core/libpath.c \
	src/engine/procpost.c src/core/text.c src/core/units.c src/export/json.c src/export/json_host.c src/export/json_nodes.c \
	src/export/jsonw.c src/core/health_rules.c \
	$(wildcard src/backend/*.c src/backend/nvml/*.c src/backend/gpm/*.c src/backend/dcgm/*.c \
		src/backend/events/*.c src/backend/amdgpu/*.c src/system/*.c)
PUB_OBJ := $(PUB_SRC:%.c=$(BUILD)/pub/%.o)
PUB_SO := $(BUILD)/pub/libmigmon.so.0
PUB_A := $(BUILD)/pub/libmigmon.a
$(BUILD)/pub/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@
$(PUB_SO): $(PUB_OBJ) src/app/libmigmon.map
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,libmigmon.so.0 -Wl,--version-script=src/app/libmigmon.map \
		-Wl,--no-undefined -o $@ $(PUB_OBJ) -ldl -lm -pthread
	ln -sf libmigmon.so.0 $(BUILD)/pub/libmigmon.so
$(PUB_A): $(PUB_OBJ)
	$(LD) -r -o $(BUILD)/pub/migmon-all.o $(PUB_OBJ)
	objcopy --localize-hidden $(BUILD)/pub/migmon-all.o
	rm -f $@
	$(AR) rcs $@ $(BUILD)/pub/migmon-all.o
.PHONY: lib
lib: $(PUB_SO) $(PUB_A)

# --version names the build's git revision: version.h is rewritten only when
# the revision (with -dirty for local changes) differs, so only main.o
# follows it. Outside a git checkout it says "unknown".
GIT_REV := $(shell git -C $(CURDIR) describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
.PHONY: FORCE
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define MIGMON_GIT_REV "%s"\n' '$(GIT_REV)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(MAIN_OBJ): $(BUILD)/gen/version.h
$(MAIN_OBJ): CFLAGS_ALL += -I$(BUILD)/gen $(BUILD_KIND)

$(BIN): $(MAIN_OBJ) $(BUILD)/libmigmon.a $(TSAN_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libmigmon.a $(TSAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TEST_CFLAGS_$*) -Itests/unit -o $@ $< $(BUILD)/libmigmon.a $(TSAN_OBJ) \
		$(LDFLAGS_ALL) $(TEST_LDFLAGS_$*) -lcmocka $(LIBS)

# SAN=thread: the options above as the programs' defaults (generated here, so
# the sources stay free of sanitizer code; rebuilt when the options change).
$(BUILD)/tsan_defaults.c: FORCE
	@mkdir -p $(dir $@) $(BUILD)/tsan-logs
	@printf '%s\n' 'const char *__tsan_default_options(void);' \
		'const char *__tsan_default_options(void) { return "$(call TSAN_OPTS,$(BUILD))"; }' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
$(BUILD)/tsan_defaults.o: $(BUILD)/tsan_defaults.c
	$(CC) $(CFLAGS_ALL) -fno-sanitize=thread -c $< -o $@
.PHONY: FORCE

# The allocation test counts the library's heap calls through --wrap.
TEST_LDFLAGS_test_collect := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
TEST_LDFLAGS_test_history := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
# Under ThreadSanitizer (SAN=thread):
# - --wrap itself is fine (libtsan is a shared library that interposes malloc
#   by symbol; __real_malloc reaches it), and the counts stay exact.
# - test_host replaces malloc itself, which TSan's runtime calls before
#   main: the test does not replace it under any sanitizer
#   (__SANITIZE_THREAD__), and only its allocation-count assertion is
#   skipped, with a message.

# Environment every test gets: where the built binary and simulator are.
TEST_ENV := MIGMON_BIN=$(CURDIR)/$(BIN) MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) \
	MIGMON_SIM_DIR=$(CURDIR)/$(SIM_DIR) MIGMON_SRC=$(CURDIR) MIGMON_SAN=$(SAN)

unit: $(BIN) $(UNIT_BIN) $(SIM_ALL)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $(TEST_ENV) $$t; done

# A job for the profile mode's tests (tests/profile_child.c).
$(BUILD)/profile_child: tests/profile_child.c
	$(CC) $(CFLAGS_ALL) -o $@ $<

# Long recordings made quickly, as the recorder writes them (tests/rec_synth.c).
$(BUILD)/rec_synth: tests/rec_synth.c $(BUILD)/libmigmon.a $(TSAN_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(TSAN_OBJ) $(LDFLAGS_ALL) $(LIBS)

e2e: $(BIN) $(SIM_ALL) $(BUILD)/profile_child $(BUILD)/rec_synth
	@$(MAKE) --no-print-directory BUILD=build SAN= lib
	@$(TEST_ENV) MIGMON_PROFILE_CHILD=$(CURDIR)/$(BUILD)/profile_child \
		MIGMON_REC_SYNTH=$(CURDIR)/$(BUILD)/rec_synth \
		MIGMON_PUB_DIR=$(CURDIR)/build/pub tests/e2e/run.sh

san-check:
	$(MAKE) BUILD=build-san SAN=1 unit e2e soak-short

# Soak: many headless ticks over every shipped scenario (tests/soak.c): no
# error, no leak, RSS flat after warm-up. make check runs 5,000 ticks (and
# again under ASan+UBSan); make soak runs 100,000, also under ASan+UBSan,
# and the fault scenarios under valgrind (docs/reliability.md).
SOAK_FAULTS := faults,mig-no-uuid,hang-power,hang-power-late,gpm-hang,vram-glitch,mig-reconfig,process-churn,inaccessible-gpu,hostile
$(BUILD)/soak: tests/soak.c $(BUILD)/libmigmon.a $(TSAN_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(TSAN_OBJ) $(LDFLAGS_ALL) $(LIBS)
.PHONY: soak soak-short
soak-short: $(BUILD)/soak $(SIM_ALL)
	$(TEST_ENV) $(BUILD)/soak 5000 $(if $(SAN),--no-rss)
soak: $(BUILD)/soak $(SIM_ALL)
	$(TEST_ENV) $(BUILD)/soak 100000
	$(MAKE) BUILD=build-san SAN=1 build-san/soak
	$(MAKE) BUILD=build-san SAN=1 build-san/sim/libnvidia-ml.so.1
	MIGMON_SIM_LIB=$(CURDIR)/build-san/sim/libnvidia-ml.so.1 MIGMON_SRC=$(CURDIR) \
		build-san/soak 100000 --no-rss
	$(TEST_ENV) $(VALGRIND) $(BUILD)/soak 100000 --no-rss --only $(SOAK_FAULTS)

# The unit and end-to-end tests under ThreadSanitizer (the sampling thread,
# the NVML workers, the GPM helper). A report stops the process at once
# (halt_on_error) with status 66, which fails the test that ran it; every
# report is also written to build-tsan/tsan-logs/report.PID (see SAN=thread
# above), printed here, and fails the target even when the process that made
# it was one whose status no test looks at (the GPM helper). What changes
# for test_host and test_collect under TSan: see TEST_LDFLAGS above.
tsan-check:
	@rm -rf build-tsan/tsan-logs && mkdir -p build-tsan/tsan-logs
	@TSAN_OPTIONS=$(call TSAN_OPTS,build-tsan) $(MAKE) BUILD=build-tsan SAN=thread unit e2e; \
	rc=$$?; for f in build-tsan/tsan-logs/report.*; do [ -e "$$f" ] || continue; \
		echo "== ThreadSanitizer report $$f"; cat "$$f"; rc=1; done; \
	[ $$rc -eq 0 ] || echo "tsan-check: FAILED" >&2; exit $$rc

# A short soak of the real binary under valgrind: every scenario, no error,
# no leak (the simulator's own allocations included).
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
valgrind-check: $(BIN) $(SIM_ALL)
	@set -e; for s in sim/scenarios/*.ini; do echo "== valgrind $$s"; \
		rc=0; MIGMON_SIM_SCENARIO=$$s MIGMON_SIM_TIME=100 $(VALGRIND) $(BIN) --once --format json \
			--timeout 3 --nvml-path $(SIM_LIB) >/dev/null || rc=$$?; \
		case "$$s:$$rc" in *:0|*/hang-*:3) ;; *) echo "valgrind-check: $$s exit $$rc"; exit 1;; esac; \
		done; \
		echo "== valgrind without a driver"; $(VALGRIND) $(BIN) --once >/dev/null; \
		echo "== valgrind of the interactive monitor"; $(TEST_ENV) tests/e2e/tui_valgrind.sh

# make test: what ./test.sh runs (minutes); make check-full: the deeper
# passes, ./test.sh --full (CI runs both; docs/ci.md); make check: both.
test: all
	$(MAKE) unit
	$(MAKE) e2e
	@echo "make test: all suites passed"

check-full: all
	$(MAKE) soak-short
	$(MAKE) valgrind-check
	$(MAKE) san-check
	$(MAKE) tsan-check
	@echo "make check-full: all suites passed"

check: test check-full
	@echo "make check: all suites passed"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/scenarios
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mig-gpu-mon
	install -m 0644 man/mig-gpu-mon.1 $(DESTDIR)$(PREFIX)/share/man/man1/mig-gpu-mon.1
	install -d $(DESTDIR)$(PREFIX)/share/doc/mig-gpu-mon
	install -m 0644 LICENSE $(DESTDIR)$(PREFIX)/share/doc/mig-gpu-mon/LICENSE
	install -m 0755 $(SIM_LIB) $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/libnvidia-ml.so.1
	install -d $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/dcgm3
	install -m 0755 $(SIM_DIR)/libdcgm.so.4 $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/libdcgm.so.4
	install -m 0755 $(SIM_DIR)/dcgm3/libdcgm.so.3 \
		$(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/dcgm3/libdcgm.so.3
	install -m 0644 sim/scenarios/*.ini $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon/sim/scenarios/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0644 completions/mig-gpu-mon.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/mig-gpu-mon
	install -m 0644 completions/_mig-gpu-mon $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_mig-gpu-mon
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0644 include/migmon.h $(DESTDIR)$(PREFIX)/include/migmon.h
	install -m 0755 $(PUB_SO) $(DESTDIR)$(PREFIX)/lib/libmigmon.so.0
	ln -sf libmigmon.so.0 $(DESTDIR)$(PREFIX)/lib/libmigmon.so
	install -m 0644 $(PUB_A) $(DESTDIR)$(PREFIX)/lib/libmigmon.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' migmon.pc.in \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/migmon.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mig-gpu-mon $(DESTDIR)$(PREFIX)/share/man/man1/mig-gpu-mon.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/mig-gpu-mon $(DESTDIR)$(PREFIX)/share/doc/mig-gpu-mon
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/mig-gpu-mon \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_mig-gpu-mon
	rm -f $(DESTDIR)$(PREFIX)/include/migmon.h $(DESTDIR)$(PREFIX)/lib/libmigmon.so.0 \
		$(DESTDIR)$(PREFIX)/lib/libmigmon.so $(DESTDIR)$(PREFIX)/lib/libmigmon.a \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/migmon.pc

clean:
	rm -rf build build-san build-tsan build-portable mig-gpu-mon sim/libnvidia-ml.so.1 \
		sim/libdcgm.so.4

# The portable binary, the release tarball and the OCI image
# (docs/portable.md), all from the build directory build-portable.
PORTABLE_DIR := build-portable
ARCH := $(shell uname -m)
DIST_NAME := mig-gpu-mon-$(VERSION)-linux-$(ARCH)
IMAGE ?= mig-gpu-mon:$(VERSION)
# The newest glibc symbol version the portable binary may need.
GLIBC_FLOOR := 2.34
.PHONY: portable dist image
portable:
	@$(MAKE) --no-print-directory BUILD=$(PORTABLE_DIR) PORTABLE=1 SAN= LDFLAGS="$(LDFLAGS) -s" \
		$(PORTABLE_DIR)/mig-gpu-mon $(PORTABLE_DIR)/sim/libnvidia-ml.so.1 \
		$(PORTABLE_DIR)/sim/libdcgm.so.4 $(PORTABLE_DIR)/sim/dcgm3/libdcgm.so.3
	@scripts/portable-check.sh $(PORTABLE_DIR)/mig-gpu-mon $(GLIBC_FLOOR)
dist: portable LICENSE
	@scripts/dist.sh $(PORTABLE_DIR) $(DIST_NAME)
image: portable
	@scripts/image.sh $(PORTABLE_DIR) $(IMAGE)

format:
	clang-format -i $(SRC) $(wildcard src/*/*/*.h src/*/*.h src/*.h sim/*.c sim/*.h sim/dcgm/*.c sim/dcgm/*.h tests/unit/*.c)

-include fuzz/fuzz.mk
# Only this build's dependency files: not those of the test roots and other
# build directories that may lie under it (build/ci, build-portable/...).
-include $(shell find $(BUILD) \( -path '$(BUILD)/ci' -o -path '$(BUILD)/root*' \) -prune \
	-o -name '*.d' -type f -print 2>/dev/null)

# Benchmarks (not part of check): make bench
$(BUILD)/bench_tick: bench/bench_tick.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) \
		-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc $(LIBS)
$(BUILD)/bench_record: bench/bench_record.c bench/proctree.c bench/proctree.h $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ bench/bench_record.c bench/proctree.c $(BUILD)/libmigmon.a \
		$(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_draw: bench/bench_draw.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) \
		-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc $(LIBS)
$(BUILD)/bench_engine: bench/bench_engine.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_scale: bench/bench_scale.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_prom: bench/bench_prom.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_procinfo: bench/bench_procinfo.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_fleet: bench/bench_fleet.c $(BUILD)/libmigmon.a
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libmigmon.a $(LDFLAGS_ALL) $(LIBS)
$(BUILD)/bench_tui: bench/bench_tui.c bench/proctree.c bench/proctree.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ bench/bench_tui.c bench/proctree.c $(LDFLAGS_ALL) -lutil
.PHONY: bench
bench: $(BIN) $(BUILD)/bench_tick $(BUILD)/bench_draw $(BUILD)/bench_engine $(BUILD)/bench_scale \
		$(BUILD)/bench_tui $(BUILD)/bench_prom $(BUILD)/bench_procinfo $(BUILD)/bench_fleet \
		$(BUILD)/bench_record $(BUILD)/rec_synth $(SIM_ALL)
	@for s in a100-sxm4-80gb h100-pcie-mig-535 dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_tick sim/scenarios/$$s.ini 2000; done
	@echo "== with the GPM helper (sampling every 100 ms)"
	@for s in h100-pcie-mig-535 h200-mig; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) MIGMON_BENCH_GPM_EXE=$(CURDIR)/$(BIN) \
			$(BUILD)/bench_tick sim/scenarios/$$s.ini 20000; done
	@for s in a100-sxm4-80gb dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_draw sim/scenarios/$$s.ini 1000; done
	@echo "== hand-off from the sampling thread to a front end"
	@for s in a100-sxm4-80gb dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_engine sim/scenarios/$$s.ini 1000; done
	@echo "== devices x processes"
	@MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) MIGMON_SIM_SCENARIOS=$(CURDIR)/sim/scenarios \
		$(BUILD)/bench_scale $(CURDIR)/$(BIN) 10
	@echo "== /proc facts of GPU processes that exist on this host"
	@for n in 100 1000; do $(BUILD)/bench_procinfo $$n 2000; done
	@echo "== the /metrics page (export)"
	@for s in a100-sxm4-80gb dgx-a100-8x7; do \
		MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) $(BUILD)/bench_prom sim/scenarios/$$s.ini 2000; done
	@echo "== the fleet's model from Prometheus' answers (--prometheus), synthetic"
	@$(BUILD)/bench_fleet -r 7 10 100 500
	@echo "== the fleet view on a real Prometheus holding a synthetic fleet (--prometheus)"
	@bench/bench_fleet_prom.sh $(CURDIR)/$(BIN) 100 1250
	@echo "== the interactive monitor in a terminal, whole process"
	@BENCH_NVTOP=$$(command -v nvtop) MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) MIGMON_SIM_SCENARIOS=$(CURDIR)/sim/scenarios \
		$(BUILD)/bench_tui $(CURDIR)/$(BIN) 10
	@echo "== record: bytes a snapshot and the writer's cost; replay --at across a day"
	@MIGMON_SIM_LIB=$(CURDIR)/$(SIM_LIB) bench/bench_record.sh $(CURDIR)/$(BIN) $(CURDIR)/$(BUILD)/bench_record $(CURDIR)/$(BUILD)/rec_synth
	@echo "== profile -- CMD: the profiler's own cost at 50 ms"
	@bench/bench_profile.sh $(CURDIR)/$(BIN) $(CURDIR)/$(SIM_LIB) $(CURDIR)/sim/scenarios
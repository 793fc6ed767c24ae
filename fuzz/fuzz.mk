# fuzz/fuzz.mk — libFuzzer targets for the /proc parsers, the NVML
# boundary (fuzz_nvml: a fake driver whose every answer comes from the input)
# and the recording reader (fuzz_replay: the input is a recording's bytes). Included by the
# top-level Makefile; not part of `make check` (the corpus is replayed there by
# tests/unit/test_fuzz_corpus.c instead).
#
#   make fuzz                 build the targets, run each for FUZZ_TIME seconds
#   make fuzz FUZZ_TIME=600   longer
#   make fuzz-build           only build $(FUZZ_BUILD)/fuzz_{procstat,meminfo,procinfo,nvml,replay}
#   make fuzz FUZZ_TARGETS=nvml FUZZ_TIME=3600   one target, one hour
#   make fuzz-clean
#
# New inputs go to $(FUZZ_BUILD)/corpus-<target>, crashes to $(FUZZ_BUILD)/;
# fuzz/corpus/<target>/ is only read. To keep a finding as a regression input,
# copy it into fuzz/corpus/<target>/ (keep the corpus under ~100 files per
# target; `make fuzz-merge` minimises into $(FUZZ_BUILD)/merged-<target>).
# Needs clang with libFuzzer (Debian: libclang-rt-14-dev).

FUZZ_CC ?= clang
FUZZ_BUILD ?= build/fuzz
FUZZ_TIME ?= 120
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Isrc -Ifuzz \
	-DMIGMON_VERSION=\"fuzz\" \
	-fsanitize=fuzzer,address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_TARGETS ?= procstat meminfo procinfo nvml replay
FUZZ_SRC_procstat := src/system/cpu.c
FUZZ_SRC_meminfo := src/system/meminfo.c
FUZZ_SRC_procinfo := src/system/procinfo.c src/core/text.c
FUZZ_SRC_nvml := $(wildcard src/backend/*.c src/backend/nvml/*.c \
	src/backend/gpm/*.c src/backend/dcgm/*.c src/backend/events/*.c src/backend/amdgpu/*.c \
	src/export/*.c src/system/*.c) src/core/model.c src/core/health_rules.c src/core/libpath.c \
	src/core/text.c src/core/clock.c src/core/debuglog.c src/engine/procpost.c src/core/units.c src/engine/health.c \
	src/engine/proclist.c src/engine/eventlog.c
FUZZ_SRC_replay := $(wildcard src/backend/replay/*.c) src/core/model.c src/core/text.c src/core/health_rules.c \
	src/backend/events/xid.c src/core/clock.c src/core/recindex.c
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

.PHONY: fuzz fuzz-build fuzz-merge fuzz-clean

fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_check.h src/system/cpu.c src/system/cpu.h \
		src/system/meminfo.c src/system/meminfo.h src/system/procinfo.c src/system/procinfo.h \
		src/core/model.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC_$*) -lm

# The NVML target builds most of the backend: it depends on every source.
$(FUZZ_BUILD)/fuzz_nvml: fuzz/fuzz_nvml.c fuzz/fuzz_nvml_drv.h $(FUZZ_SRC_nvml) $(wildcard src/*.h src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC_nvml) -lm -ldl -pthread

# The recording reader: jansson, zlib and zstd.
$(FUZZ_BUILD)/fuzz_replay: fuzz/fuzz_replay.c fuzz/fuzz_replay_check.h $(FUZZ_SRC_replay) \
		$(wildcard src/backend/replay/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC_replay) \
		-ljansson -lz -lzstd -lm -pthread

fuzz: $(FUZZ_BINS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t; \
		echo "== fuzz_$$t for $(FUZZ_TIME)s"; \
		$(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/ \
			$(FUZZ_BUILD)/corpus-$$t fuzz/corpus/$$t; \
	done

fuzz-merge: $(FUZZ_BINS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_BUILD)/merged-$$t; mkdir -p $(FUZZ_BUILD)/merged-$$t; \
		$(FUZZ_BUILD)/fuzz_$$t -merge=1 $(FUZZ_BUILD)/merged-$$t \
			fuzz/corpus/$$t $(FUZZ_BUILD)/corpus-$$t; \
		echo "$$t: $$(ls $(FUZZ_BUILD)/merged-$$t | wc -l) inputs in $(FUZZ_BUILD)/merged-$$t"; \
	done

fuzz-clean:
	rm -rf $(FUZZ_BUILD)

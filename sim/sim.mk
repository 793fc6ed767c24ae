# sim/sim.mk — the NVML simulator, included by the top-level Makefile, which
# sets SIM_DIR (= $(BUILD)/sim) and CFLAGS_ALL / LDFLAGS_ALL.
#
#   $(SIM_LIB)                        the full library: every symbol in
#                                     sim/symbols.txt; functions newer than a
#                                     scenario's driver_version answer
#                                     NVML_ERROR_FUNCTION_NOT_FOUND
#   $(SIM_DIR)/drv-<X>/libnvidia-ml.so.1
#                                     symbol-accurate variants: the linker
#                                     version script exports only what driver
#                                     <X> had, and the library reports <X>
#
# Both come from the one table sim/symbols.txt via sim/symbols.awk.
#
#   $(SIM_DCGM_LIBS)                  the simulated DCGM (sim/dcgm/, docs/simulator.md
#                                     "Simulated DCGM"): $(SIM_DIR)/libdcgm.so.4 and the
#                                     same code as $(SIM_DIR)/dcgm3/libdcgm.so.3, each
#                                     with the simulator's core linked in and only the
#                                     DCGM functions exported (sim/dcgm/libdcgm.map)

# This file is included before the top-level `all`: keep our rules from
# becoming make's default goal (restored at the end of the file).
SIM_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)

SIM_LIB := $(SIM_DIR)/libnvidia-ml.so.1

# variant directory -> driver version it models
SIM_VARIANTS := drv-450 drv-535 drv-535.86
SIM_DRIVER_drv-450 := 450.66
SIM_DRIVER_drv-535 := 535.129.03
SIM_DRIVER_drv-535.86 := 535.86.10

SIM_VARIANT_LIBS := $(SIM_VARIANTS:%=$(SIM_DIR)/%/libnvidia-ml.so.1)
SIM_DCGM_LIBS := $(SIM_DIR)/libdcgm.so.4 $(SIM_DIR)/dcgm3/libdcgm.so.3
SIM_ALL := $(SIM_LIB) $(SIM_VARIANT_LIBS) $(SIM_DCGM_LIBS)

SIM_SRC := $(filter-out sim/variant.c,$(sort $(wildcard sim/*.c)))
SIM_OBJ := $(SIM_SRC:sim/%.c=$(SIM_DIR)/obj/%.o)
SIM_GEN := $(SIM_DIR)/gen/sim_symbols.h
SIM_CFLAGS = $(CFLAGS_ALL) -fPIC -I$(SIM_DIR)/gen -Isim
SIM_LDLIBS := -linih -lm -pthread
# the portable build's simulator (make dist): inih inside, only glibc needed
ifeq ($(PORTABLE),1)
SIM_LDLIBS := -Wl,-Bstatic -linih -Wl,-Bdynamic -lm -pthread
endif
SIM_SONAME := -Wl,-soname,libnvidia-ml.so.1

$(SIM_GEN): sim/symbols.txt sim/symbols.awk
	@mkdir -p $(dir $@)
	awk -v mode=header -f sim/symbols.awk sim/symbols.txt > $@.tmp && mv $@.tmp $@

$(SIM_OBJ): $(SIM_DIR)/obj/%.o: sim/%.c $(SIM_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -MMD -MP -c $< -o $@

# The full library.
$(SIM_DIR)/obj/variant-full.o: sim/variant.c $(SIM_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -MMD -MP -c $< -o $@

$(SIM_DIR)/exports-full.map: sim/symbols.txt sim/symbols.awk
	@mkdir -p $(dir $@)
	awk -v mode=map -v driver=all -f sim/symbols.awk sim/symbols.txt > $@.tmp && mv $@.tmp $@

$(SIM_LIB): $(SIM_OBJ) $(SIM_DIR)/obj/variant-full.o $(SIM_DIR)/exports-full.map
	$(CC) -shared -fPIC $(SIM_SONAME) -Wl,--version-script=$(SIM_DIR)/exports-full.map \
		-o $@ $(SIM_OBJ) $(SIM_DIR)/obj/variant-full.o $(LDFLAGS_ALL) $(SIM_LDLIBS)

# One variant per driver: its own variant.o and version script.
define SIM_VARIANT_RULES
$(SIM_DIR)/$(1)/variant.o: sim/variant.c $(SIM_GEN)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(SIM_CFLAGS) -DSIM_VARIANT_DRIVER='"$(SIM_DRIVER_$(1))"' -MMD -MP -c $$< -o $$@

$(SIM_DIR)/$(1)/exports.map: sim/symbols.txt sim/symbols.awk
	@mkdir -p $$(dir $$@)
	awk -v mode=map -v driver=$(SIM_DRIVER_$(1)) -f sim/symbols.awk sim/symbols.txt > $$@.tmp \
		&& mv $$@.tmp $$@

$(SIM_DIR)/$(1)/libnvidia-ml.so.1: $(SIM_OBJ) $(SIM_DIR)/$(1)/variant.o $(SIM_DIR)/$(1)/exports.map
	$$(CC) -shared -fPIC $(SIM_SONAME) -Wl,--version-script=$(SIM_DIR)/$(1)/exports.map \
		-o $$@ $(SIM_OBJ) $(SIM_DIR)/$(1)/variant.o $$(LDFLAGS_ALL) $(SIM_LDLIBS)
endef
$(foreach v,$(SIM_VARIANTS),$(eval $(call SIM_VARIANT_RULES,$(v))))

# The simulated DCGM: its own files, on the core that models the machine
# (no NVML function of it is exported).
SIM_CORE := state scenario scenario_check scenario_keys scenario_values scenario_dcgm scenario_events model valfn \
	profiles errors gpm_rates
SIM_CORE_OBJ := $(SIM_CORE:%=$(SIM_DIR)/obj/%.o) $(SIM_DIR)/obj/variant-full.o
SIM_DCGM_SRC := $(sort $(wildcard sim/dcgm/*.c))
SIM_DCGM_OBJ := $(SIM_DCGM_SRC:sim/dcgm/%.c=$(SIM_DIR)/obj/dcgm/%.o)

$(SIM_DCGM_OBJ): $(SIM_DIR)/obj/dcgm/%.o: sim/dcgm/%.c $(SIM_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -MMD -MP -c $< -o $@

# $(call SIM_DCGM_LINK,SONAME)
SIM_DCGM_LINK = $(CC) -shared -fPIC -Wl,-soname,$(1) -Wl,--version-script=sim/dcgm/libdcgm.map \
	-Wl,--no-undefined -o $@ $(SIM_DCGM_OBJ) $(SIM_CORE_OBJ) $(LDFLAGS_ALL) $(SIM_LDLIBS)
$(SIM_DIR)/libdcgm.so.4: $(SIM_DCGM_OBJ) $(SIM_CORE_OBJ) sim/dcgm/libdcgm.map
	$(call SIM_DCGM_LINK,libdcgm.so.4)
$(SIM_DIR)/dcgm3/libdcgm.so.3: $(SIM_DCGM_OBJ) $(SIM_CORE_OBJ) sim/dcgm/libdcgm.map
	@mkdir -p $(dir $@)
	$(call SIM_DCGM_LINK,libdcgm.so.3)

.PHONY: sim
sim: $(SIM_ALL)

.DEFAULT_GOAL := $(SIM_SAVED_DEFAULT_GOAL)

/*
 * variant.c — which driver this build of the library is. Compiled once per
 * library (sim/sim.mk): empty for the full library, which follows each
 * scenario's driver_version; a driver version for a symbol-accurate variant
 * (build/sim/drv-*), which exports only that driver's symbols and reports
 * that driver whatever the scenario says.
 */
#include "state.h"

#ifndef SIM_VARIANT_DRIVER
#define SIM_VARIANT_DRIVER ""
#endif

const char sim_variant_driver[] = SIM_VARIANT_DRIVER;

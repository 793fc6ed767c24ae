/*
 * state.h — the simulator's runtime state: the init reference count, the
 * loaded scenario, the simulated clock, device handles, symbol availability
 * for the scenario's driver, fault injection, and the per-list state of the
 * "process list grows between size and data query" race.
 *
 * Every exported NVML function runs between sim_enter*() and sim_leave(),
 * which hold one mutex (NVML is documented thread-safe), so the API files
 * read sim_scn and the call's time without further locking. The one
 * exception is a fault's delay or hang: sim_fault() sleeps with the mutex
 * released, so calls on other threads proceed meanwhile.
 */
#ifndef SIM_STATE_H
#define SIM_STATE_H

#include <stdbool.h>

#include "backend/nvml/nvml_api.h"
#include "scenario.h"

enum sim_sym {
#define SIM_SYM(name, first, from, until) SYM_##name,
#include "sim_symbols.h"
#undef SIM_SYM
    SYM_COUNT
};

/* Timestamps (samples, field values) are µs since this fixed epoch
 * (2023-11-14T22:13:20Z) plus the simulated time, so they are deterministic. */
#define SIM_EPOCH_US 1700000000000000ULL

struct nvmlDevice_st {
    unsigned magic;
    int gpu;
    int slot; /* -1: the physical GPU; else the MIG slot (GetMigDeviceHandleByIndex index) */
};

struct sim_dev {
    int gpu, slot;
    const struct sim_gpu *g;
    const struct sim_mig *m; /* the MIG device now in the slot; NULL for a physical GPU */
    bool mig_on;             /* the physical GPU has MIG mode enabled */
};

struct sim_call {
    int sym;
    double t; /* simulated seconds since the nvmlInit that loaded the scenario */
    struct sim_dev d;
};

/* The scenario; non-NULL between a successful init and the last shutdown. */
extern const struct sim_scenario *sim_scn;

/* Locks; checks init and that the scenario's driver has the function.
 * Always pair with sim_leave(), whatever it returns. */
nvmlReturn_t sim_enter(struct sim_call *c, int sym);
/* sim_enter, then resolves the handle into c->d and applies faults. */
nvmlReturn_t sim_enter_dev(struct sim_call *c, int sym, nvmlDevice_t device);
/* Applies the scenario's faults for this call on gpu/slot (-1/-1: "system").
 * A fault with delay_ms or hang releases the mutex while it sleeps; if the
 * session ended meanwhile (its scenario was freed), this returns
 * UNINITIALIZED, and the caller must not use pointers into the old scenario. */
nvmlReturn_t sim_fault(struct sim_call *c, int gpu, int slot);
nvmlReturn_t sim_leave(nvmlReturn_t r);

/* sym: the init function called (its faults may delay or hang it). */
nvmlReturn_t sim_init(unsigned flags, bool v1, int sym);
nvmlReturn_t sim_shutdown(void);
/* The NVML version string without init (nvmlSystemGetNVMLVersion needs none),
 * and the hostile scenario's raw replacement (raw->set false if none). */
void sim_peek_nvml_version(char *buf, size_t len, struct sim_raw *raw);

nvmlDevice_t sim_gpu_handle(int gpu);
nvmlDevice_t sim_mig_handle(int gpu, int slot);
/* The MIG device in gpu/slot at time t, or NULL if the slot is empty. */
const struct sim_mig *sim_mig_live(int gpu, int slot, double t);
/* Identifies the current NVML session (one per 0 -> 1 init): state that
 * outlives a session, such as GPM samples, records it. */
unsigned long long sim_session(void);
/* True if the driver in the scenario is at least a.b.c. */
bool sim_driver_at_least(unsigned a, unsigned b, unsigned c);
unsigned long long sim_timestamp_us(double t);
/* The simulated clock runs with real time (no MIGMON_SIM_TIME): a point of
 * it t seconds ahead is t real seconds away. */
bool sim_clock_real(void);

/* Process-list race flag for gpu/slot and list kind (0 compute, 1 graphics, 2 MPS). */
bool *sim_grow_flag(int gpu, int slot, int kind);

/* Built into each library: "" for the full one, the driver for a variant. */
extern const char sim_variant_driver[];

#endif

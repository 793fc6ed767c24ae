/*
 * api_system.c — init/shutdown, system queries, device enumeration and
 * identity (docs/nvml-facts.md §2-3).
 */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "model.h"

nvmlReturn_t nvmlInit_v2(void)
{
    return sim_init(0, false, SYM_nvmlInit_v2);
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    return sim_init(flags, false, SYM_nvmlInitWithFlags);
}

nvmlReturn_t nvmlInit(void)
{
    return sim_init(0, true, SYM_nvmlInit);
}

nvmlReturn_t nvmlShutdown(void)
{
    return sim_shutdown();
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    return sim_error_string(result);
}

/* A hostile scenario's raw strings replace the versions byte for byte
 * (model_copy_raw: no NUL when they fill the buffer). */
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    char buf[64];
    struct sim_raw raw;
    sim_peek_nvml_version(buf, sizeof(buf), &raw);
    return raw.set ? model_copy_raw(version, length, &raw)
                   : model_copy_string(version, length, buf);
}

SIM_SYSTEM_FN(nvmlSystemGetDriverVersion, (char *version, unsigned int length),
              sim_scn->sys.driver_raw.set
                  ? model_copy_raw(version, length, &sim_scn->sys.driver_raw)
                  : model_copy_string(version, length, sim_scn->sys.driver))

static nvmlReturn_t cuda_version(int *v, bool v2)
{
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* _v2 asks libcuda's cuDriverGetVersion; without libcuda it fails, while
     * the old call answers a known supported version regardless. */
    if (v2 && !sim_scn->sys.libcuda)
        return NVML_ERROR_LIBRARY_NOT_FOUND;
    *v = sim_scn->sys.cuda_version;
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion),
              cuda_version(cudaDriverVersion, false))
SIM_SYSTEM_FN(nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion),
              cuda_version(cudaDriverVersion, true))

/* v1 skips GPUs the caller may not open; v2 counts every physical GPU. */
static nvmlReturn_t device_count(unsigned *count, bool v2)
{
    unsigned n = 0;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < sim_scn->n_gpus; i++)
        n += v2 || sim_scn->gpus[i].accessible;
    *count = n;
    return NVML_SUCCESS;
}

SIM_SYSTEM_FN(nvmlDeviceGetCount, (unsigned int *deviceCount), device_count(deviceCount, false))
SIM_SYSTEM_FN(nvmlDeviceGetCount_v2, (unsigned int *deviceCount), device_count(deviceCount, true))

static nvmlReturn_t handle_by_index(struct sim_call *c, unsigned index, nvmlDevice_t *device,
                                    bool v2)
{
    int gpu = -1;
    nvmlReturn_t r;
    if (!device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (v2) {
        if (index >= (unsigned)sim_scn->n_gpus)
            return NVML_ERROR_INVALID_ARGUMENT;
        gpu = (int)index;
        if (!sim_scn->gpus[gpu].accessible)
            return NVML_ERROR_NO_PERMISSION;
    } else {
        /* v1 indices run over the accessible GPUs only. */
        unsigned k = 0;
        for (int i = 0; i < sim_scn->n_gpus && gpu < 0; i++)
            if (sim_scn->gpus[i].accessible && k++ == index)
                gpu = i;
        if (gpu < 0)
            return NVML_ERROR_INVALID_ARGUMENT;
    }
    r = sim_fault(c, gpu, -1);
    if (r == NVML_SUCCESS)
        *device = sim_gpu_handle(gpu);
    return r;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    struct sim_call c;
    nvmlReturn_t r = sim_enter(&c, SYM_nvmlDeviceGetHandleByIndex);
    if (r == NVML_SUCCESS)
        r = handle_by_index(&c, index, device, false);
    return sim_leave(r);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    struct sim_call c;
    nvmlReturn_t r = sim_enter(&c, SYM_nvmlDeviceGetHandleByIndex_v2);
    if (r == NVML_SUCCESS)
        r = handle_by_index(&c, index, device, true);
    return sim_leave(r);
}

/* A GPU UUID or, since MIG, a MIG device UUID (docs/nvml-facts.md §3). */
static nvmlReturn_t handle_by_uuid(struct sim_call *c, const char *uuid, nvmlDevice_t *device)
{
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < sim_scn->n_gpus; i++) {
        const struct sim_gpu *g = &sim_scn->gpus[i];
        if (!strcmp(g->uuid, uuid) ||
            (g->uuid_raw.set && g->uuid_raw.len == strlen(uuid) &&
             !memcmp(g->uuid_raw.bytes, uuid, g->uuid_raw.len))) {
            nvmlReturn_t r = g->accessible ? sim_fault(c, i, -1) : NVML_ERROR_NO_PERMISSION;
            if (r == NVML_SUCCESS)
                *device = sim_gpu_handle(i);
            return r;
        }
        if (g->mig_mode != SIM_MIG_ON || !g->accessible)
            continue;
        for (int s = 0; s < SIM_MAX_MIG_SLOTS; s++) {
            const struct sim_mig *m = sim_mig_live(i, s, c->t);
            if (m && !strcmp(m->uuid, uuid)) {
                nvmlReturn_t r = sim_fault(c, i, s);
                if (r == NVML_SUCCESS)
                    *device = sim_mig_handle(i, s);
                return r;
            }
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    struct sim_call c;
    nvmlReturn_t r = sim_enter(&c, SYM_nvmlDeviceGetHandleByUUID);
    if (r == NVML_SUCCESS)
        r = handle_by_uuid(&c, uuid, device);
    return sim_leave(r);
}

static nvmlReturn_t handle_by_pci(struct sim_call *c, const char *bus_id, nvmlDevice_t *device)
{
    unsigned dom, bus, dev;
    if (!bus_id || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (sscanf(bus_id, "%x:%x:%x", &dom, &bus, &dev) != 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < sim_scn->n_gpus; i++) {
        const struct sim_gpu *g = &sim_scn->gpus[i];
        if (g->pci_domain == dom && g->pci_bus == bus && g->pci_device == dev) {
            nvmlReturn_t r = g->accessible ? sim_fault(c, i, -1) : NVML_ERROR_NO_PERMISSION;
            if (r == NVML_SUCCESS)
                *device = sim_gpu_handle(i);
            return r;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    struct sim_call c;
    nvmlReturn_t r = sim_enter(&c, SYM_nvmlDeviceGetHandleByPciBusId_v2);
    if (r == NVML_SUCCESS)
        r = handle_by_pci(&c, pciBusId, device);
    return sim_leave(r);
}

/* A MIG device is named after its parent and profile, e.g.
 * "NVIDIA H100 PCIe MIG 3g.40gb"; a compute instance smaller than its GPU
 * instance adds the CI slices: "MIG 1c.3g.40gb". */
static nvmlReturn_t device_name(struct sim_call *c, char *name, unsigned len)
{
    char buf[SIM_NAME_LEN + 40];
    const struct sim_mig *m = c->d.m;
    if (!m && c->d.g->name_raw.set)
        return model_copy_raw(name, len, &c->d.g->name_raw);
    if (!m)
        return model_copy_string(name, len, c->d.g->name);
    if (m->ci_slices < m->profile->slices)
        snprintf(buf, sizeof(buf), "%s MIG %uc.%s", c->d.g->name, m->ci_slices, m->profile->name);
    else
        snprintf(buf, sizeof(buf), "%s MIG %s", c->d.g->name, m->profile->name);
    return model_copy_string(name, len, buf);
}

SIM_DEVICE_FN(nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length),
              device_name(&c, name, length))
SIM_DEVICE_FN(nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length),
              c.d.m                  ? model_copy_string(uuid, length, c.d.m->uuid)
              : c.d.g->uuid_raw.set ? model_copy_raw(uuid, length, &c.d.g->uuid_raw)
                                     : model_copy_string(uuid, length, c.d.g->uuid))

/* The board's serial number, from the inforom: NOT_SUPPORTED without one
 * (a scenario without `serial`), and on a MIG handle, which is not a board. */
static nvmlReturn_t serial(const struct sim_call *c, char *out, unsigned len)
{
    if (c->d.m || !c->d.g->serial[0])
        return NVML_ERROR_NOT_SUPPORTED;
    return model_copy_string(out, len, c->d.g->serial);
}

SIM_DEVICE_FN(nvmlDeviceGetSerial, (nvmlDevice_t device, char *out, unsigned int length),
              serial(&c, out, length))

/* A MIG handle reports its parent's PCI location: MIG devices share it. */
static nvmlReturn_t pci_info(struct sim_call *c, nvmlPciInfo_t *pci)
{
    const struct sim_gpu *g = c->d.g;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
             g->pci_domain & 0xffff, g->pci_bus, g->pci_device);
    snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", g->pci_domain, g->pci_bus,
             g->pci_device);
    pci->domain = g->pci_domain;
    pci->bus = g->pci_bus;
    pci->device = g->pci_device;
    pci->pciDeviceId = g->pci_device_id;
    pci->pciSubSystemId = g->pci_subsystem_id;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetPciInfo, (nvmlDevice_t device, nvmlPciInfo_t *pci), pci_info(&c, pci))
SIM_DEVICE_FN(nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_t *pci),
              pci_info(&c, pci))
SIM_DEVICE_FN(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci),
              pci_info(&c, pci))

static nvmlReturn_t pci_info_ext(struct sim_call *c, nvmlPciInfoExt_v1_t *pci)
{
    const struct sim_gpu *g = c->d.g;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (pci->version != nvmlPciInfoExt_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    pci->domain = g->pci_domain;
    pci->bus = g->pci_bus;
    pci->device = g->pci_device;
    pci->pciDeviceId = g->pci_device_id;
    pci->pciSubSystemId = g->pci_subsystem_id;
    pci->baseClass = 0x03; /* display controller */
    pci->subClass = 0x02;  /* 3D controller: data-centre GPUs have no display */
    snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", g->pci_domain, g->pci_bus,
             g->pci_device);
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetPciInfoExt, (nvmlDevice_t device, nvmlPciInfoExt_v1_t *pci),
              pci_info_ext(&c, pci))

static nvmlReturn_t out_uint(unsigned *p, unsigned v)
{
    if (!p)
        return NVML_ERROR_INVALID_ARGUMENT;
    *p = v;
    return NVML_SUCCESS;
}

/* For a MIG handle, the index GetMigDeviceHandleByIndex accepts. */
SIM_DEVICE_FN(nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int *index),
              out_uint(index, (unsigned)(c.d.m ? c.d.slot : c.d.gpu)))
SIM_DEVICE_FN(nvmlDeviceGetArchitecture, (nvmlDevice_t device, nvmlDeviceArchitecture_t *arch),
              out_uint(arch, c.d.g->arch))
SIM_DEVICE_FN(nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber),
              c.d.m ? NVML_ERROR_NOT_SUPPORTED : out_uint(minorNumber, c.d.g->minor_number))

static nvmlReturn_t compute_capability(struct sim_call *c, int *major, int *minor)
{
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = c->d.g->cc_major;
    *minor = c->d.g->cc_minor;
    return NVML_SUCCESS;
}

SIM_DEVICE_FN(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor),
              compute_capability(&c, major, minor))

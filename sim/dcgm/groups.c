/*
 * groups.c — entity groups, field groups and watches, per handle. See
 * dcgm_sim.h.
 *
 * A watch covers the (entity, field) pairs of its group and field group
 * when dcgmWatchFields is called. Its first sample is taken at the next
 * update cycle (dcgm_agent.h, dcgmWatchFields): in AUTO mode the engine
 * updates every updateFreq of simulated time from the watch on; in either
 * mode dcgmUpdateAllFields takes one at once. A sample reports the mean
 * activity since the previous one (at most updateFreq back), the way GPM
 * reports the mean between two samples.
 */
#include "dcgm_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dcgm_conn_clear(struct dcgm_conn *c)
{
    for (int i = 0; i < DCGM_MAX_NUM_GROUPS; i++) {
        free(c->groups[i]);
        c->groups[i] = NULL;
    }
    free(c->watches);
    c->watches = NULL;
    c->n_watches = c->watches_cap = 0;
}

static struct dcgm_group **group_slot(struct dcgm_conn *c, dcgmGpuGrp_t id)
{
    for (int i = 0; i < DCGM_MAX_NUM_GROUPS; i++)
        if (c->groups[i] && c->groups[i]->id == id)
            return &c->groups[i];
    return NULL;
}

static struct dcgm_fgroup *fgroup_find(struct dcgm_conn *c, dcgmFieldGrp_t id)
{
    for (int i = 0; i < DCGM_MAX_NUM_FIELD_GROUPS; i++)
        if (c->fgroups[i].used && c->fgroups[i].id == id)
            return &c->fgroups[i];
    return NULL;
}

static bool group_has(const struct dcgm_group *g, dcgmGroupEntityPair_t e)
{
    for (int i = 0; i < g->n; i++)
        if (g->e[i].entityGroupId == e.entityGroupId && g->e[i].entityId == e.entityId)
            return true;
    return false;
}

/* DEFAULT: every GPU; DEFAULT_INSTANCES / _COMPUTE_INSTANCES: every GI / CI. */
static dcgmReturn_t group_fill(const struct dcgm_conn *c, struct dcgm_group *g, int type, double t)
{
    if (type == DCGM_GROUP_DEFAULT) {
        for (int i = 0; i < sim_scn->n_gpus; i++)
            if (sim_scn->gpus[i].accessible)
                g->e[g->n++] = (dcgmGroupEntityPair_t){DCGM_FE_GPU, (dcgm_field_eid_t)i};
        return DCGM_ST_OK;
    }
    if (dcgm_mig_denied(c))
        return DCGM_ST_REQUIRES_ROOT;
    g->n =
        dcgm_instances(type == DCGM_GROUP_DEFAULT_INSTANCES, t, g->e, DCGM_GROUP_MAX_ENTITIES_V2);
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmGroupCreate(dcgmHandle_t pDcgmHandle, int type, const char *groupName,
                             dcgmGpuGrp_t *pDcgmGrpId)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmGroupCreate, pDcgmHandle, false, &c, &t);
    int i = 0;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!groupName || !*groupName || !pDcgmGrpId ||
        (type != DCGM_GROUP_DEFAULT && type != DCGM_GROUP_EMPTY &&
         type != DCGM_GROUP_DEFAULT_INSTANCES && type != DCGM_GROUP_DEFAULT_COMPUTE_INSTANCES))
        return dcgm_leave(DCGM_ST_BADPARAM);
    while (i < DCGM_MAX_NUM_GROUPS && c->groups[i])
        i++;
    if (i == DCGM_MAX_NUM_GROUPS)
        return dcgm_leave(DCGM_ST_MAX_LIMIT);
    struct dcgm_group *g = calloc(1, sizeof(*g));
    if (!g)
        return dcgm_leave(DCGM_ST_GENERIC_ERROR);
    if (type != DCGM_GROUP_EMPTY && (r = group_fill(c, g, type, t)) != DCGM_ST_OK) {
        free(g);
        return dcgm_leave(r);
    }
    g->id = c->next_id++;
    c->groups[i] = g;
    *pDcgmGrpId = g->id;
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId)
{
    struct dcgm_conn *c;
    struct dcgm_group **p;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmGroupDestroy, pDcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!(p = group_slot(c, groupId)))
        return dcgm_leave(DCGM_ST_NOT_CONFIGURED);
    free(*p);
    *p = NULL;
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                dcgm_field_entity_group_t entityGroupId, dcgm_field_eid_t entityId)
{
    struct dcgm_conn *c;
    struct dcgm_group **p;
    struct gpm_target tg;
    double t;
    dcgmGroupEntityPair_t e = {entityGroupId, entityId};
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmGroupAddEntity, pDcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!(p = group_slot(c, groupId)))
        return dcgm_leave(DCGM_ST_NOT_CONFIGURED);
    /* dcgm_agent.h: BADPARAM "if entityId is invalid or already part of the
     * specified group" */
    if (!dcgm_entity_resolve(c, e, t, &tg) || group_has(*p, e))
        return dcgm_leave(DCGM_ST_BADPARAM);
    if ((*p)->n == DCGM_GROUP_MAX_ENTITIES_V2)
        return dcgm_leave(DCGM_ST_MAX_LIMIT);
    (*p)->e[(*p)->n++] = e;
    return dcgm_leave(DCGM_ST_OK);
}

/* Field-group names are unique (DcgmFieldGroupManager answers DUPLICATE_KEY). */
dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t dcgmHandle, int numFieldIds,
                                  const unsigned short *fieldIds, const char *fieldGroupName,
                                  dcgmFieldGrp_t *dcgmFieldGroupId)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmFieldGroupCreate, dcgmHandle, false, &c, &t);
    int free_slot = -1;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (numFieldIds < 1 || numFieldIds > DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP || !fieldIds ||
        !fieldGroupName || !*fieldGroupName || strlen(fieldGroupName) >= DCGM_MAX_STR_LENGTH ||
        !dcgmFieldGroupId)
        return dcgm_leave(DCGM_ST_BADPARAM);
    for (int i = 0; i < numFieldIds; i++)
        if (fieldIds[i] == 0 || fieldIds[i] >= DCGM_FI_MAX_FIELDS)
            return dcgm_leave(DCGM_ST_BADPARAM);
    for (int i = 0; i < DCGM_MAX_NUM_FIELD_GROUPS; i++) {
        if (!c->fgroups[i].used) {
            if (free_slot < 0)
                free_slot = i;
        } else if (!strcmp(c->fgroups[i].name, fieldGroupName)) {
            return dcgm_leave(DCGM_ST_DUPLICATE_KEY);
        }
    }
    if (free_slot < 0)
        return dcgm_leave(DCGM_ST_MAX_LIMIT);
    struct dcgm_fgroup *f = &c->fgroups[free_slot];
    f->used = true;
    f->id = c->next_id++;
    strcpy(f->name, fieldGroupName); /* length checked above */
    f->n = numFieldIds;
    memcpy(f->f, fieldIds, (size_t)numFieldIds * sizeof(f->f[0]));
    *dcgmFieldGroupId = f->id;
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t dcgmHandle, dcgmFieldGrp_t dcgmFieldGroupId)
{
    struct dcgm_conn *c;
    struct dcgm_fgroup *f;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmFieldGroupDestroy, dcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!(f = fgroup_find(c, dcgmFieldGroupId)))
        return dcgm_leave(DCGM_ST_BADPARAM);
    memset(f, 0, sizeof(*f));
    return dcgm_leave(DCGM_ST_OK);
}

static struct dcgm_watch *watch_find(struct dcgm_conn *c, dcgmGroupEntityPair_t e,
                                     unsigned short field)
{
    for (int i = 0; i < c->n_watches; i++) {
        struct dcgm_watch *w = &c->watches[i];
        if (w->e.entityGroupId == e.entityGroupId && w->e.entityId == e.entityId &&
            w->field == field)
            return w;
    }
    return NULL;
}

/*
 * The profiling module's rules for watching the profiling fields of f on
 * the entities of g: the module must be there (MODULE_NOT_LOADED), may need
 * root (REQUIRES_ROOT), must not be held by another profiler
 * (PROFILING_LIBRARY_ERROR), and with multiplexing (multi_pass = yes, GPUs
 * before Hopper) every profiling field watched on a GPU must come from one
 * metric group (PROFILING_MULTI_PASS).
 */
static dcgmReturn_t prof_check(struct dcgm_conn *c, const struct dcgm_group *g,
                               const struct dcgm_fgroup *f)
{
    bool passes[2] = {false, false}, any = false;
    for (int j = 0; j < f->n; j++)
        if (dcgm_is_prof_field(f->f[j])) {
            any = true;
            passes[dcgm_prof_pass(f->f[j])] = true;
        }
    if (!any)
        return DCGM_ST_OK;
    if (c->embedded && (c->prof_denied || sim_scn->dcgm.embedded == SIM_DCGM_EMB_MODULE_NOT_LOADED))
        return DCGM_ST_MODULE_NOT_LOADED;
    for (int i = 0; i < g->n; i++)
        if (dcgm_prof_denied(c, dcgm_entity_gpu(g->e[i])))
            return DCGM_ST_REQUIRES_ROOT;
    if (c->embedded && sim_scn->dcgm.embedded == SIM_DCGM_EMB_PROFILING_HELD)
        return DCGM_ST_PROFILING_LIBRARY_ERROR;
    if (!sim_scn->dcgm.multi_pass)
        return DCGM_ST_OK;
    for (int i = 0; i < g->n; i++) {
        int gpu = dcgm_entity_gpu(g->e[i]);
        bool p[2] = {passes[0], passes[1]};
        if (gpu < 0 || gpu >= sim_scn->n_gpus || sim_scn->gpus[gpu].arch >= NVML_DEVICE_ARCH_HOPPER)
            continue;
        for (int k = 0; k < c->n_watches; k++)
            if (dcgm_entity_gpu(c->watches[k].e) == gpu && dcgm_is_prof_field(c->watches[k].field))
                p[dcgm_prof_pass(c->watches[k].field)] = true;
        if (p[0] && p[1])
            return DCGM_ST_PROFILING_MULTI_PASS;
    }
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                             dcgmFieldGrp_t fieldGroupId, long long updateFreq, double maxKeepAge,
                             int maxKeepSamples)
{
    struct dcgm_conn *c;
    struct dcgm_group **p;
    struct dcgm_fgroup *f;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmWatchFields, pDcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    dcgm_maybe_hang(SIM_DCGM_HANG_WATCH, t);
    if (!(p = group_slot(c, groupId)))
        return dcgm_leave(DCGM_ST_NOT_CONFIGURED);
    if (!(f = fgroup_find(c, fieldGroupId)) || updateFreq <= 0 || !(maxKeepAge >= 0) ||
        maxKeepSamples < 0)
        return dcgm_leave(DCGM_ST_BADPARAM);
    if ((r = prof_check(c, *p, f)) != DCGM_ST_OK)
        return dcgm_leave(r);
    for (int i = 0; i < (*p)->n; i++) {
        for (int j = 0; j < f->n; j++) {
            struct dcgm_watch *w = watch_find(c, (*p)->e[i], f->f[j]);
            if (!w) {
                if (c->n_watches == c->watches_cap) {
                    int cap = c->watches_cap ? c->watches_cap * 2 : 64;
                    struct dcgm_watch *nw = realloc(c->watches, (size_t)cap * sizeof(*nw));
                    if (!nw)
                        return dcgm_leave(DCGM_ST_GENERIC_ERROR);
                    c->watches = nw;
                    c->watches_cap = cap;
                }
                w = &c->watches[c->n_watches++];
                *w = (struct dcgm_watch){.e = (*p)->e[i], .field = f->f[j]};
            }
            /* watching again changes the interval, and the auto cycle restarts */
            w->freq_s = (double)updateFreq / 1e6;
            w->t_watch = t;
        }
    }
    return dcgm_leave(DCGM_ST_OK);
}

dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                               dcgmFieldGrp_t fieldGroupId)
{
    struct dcgm_conn *c;
    struct dcgm_group **p;
    struct dcgm_fgroup *f;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmUnwatchFields, pDcgmHandle, false, &c, &t);
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    if (!(p = group_slot(c, groupId)))
        return dcgm_leave(DCGM_ST_NOT_CONFIGURED);
    if (!(f = fgroup_find(c, fieldGroupId)))
        return dcgm_leave(DCGM_ST_BADPARAM);
    for (int i = 0; i < (*p)->n; i++)
        for (int j = 0; j < f->n; j++) {
            struct dcgm_watch *w = watch_find(c, (*p)->e[i], f->f[j]);
            if (w)
                *w = c->watches[--c->n_watches];
        }
    return dcgm_leave(DCGM_ST_OK);
}

/* A sample of w taken at ts: it covers the time since the previous one, at
 * most freq_s back, never before the watch. */
static void watch_sample(struct dcgm_watch *w, double ts)
{
    double from = fmax(ts - w->freq_s, w->sampled ? w->t_sample : w->t_watch);
    if (w->sampled && ts <= w->t_sample)
        return;
    w->t_from = fmin(from, ts);
    w->t_sample = ts;
    w->sampled = true;
}

/* The AUTO engine's update cycles up to t: the last one at or before t. */
void dcgm_watches_advance(struct dcgm_conn *c, double t)
{
    if (c->op_mode != DCGM_OPERATION_MODE_AUTO)
        return;
    for (int i = 0; i < c->n_watches; i++) {
        struct dcgm_watch *w = &c->watches[i];
        double k = floor((t - w->t_watch) / w->freq_s);
        if (k >= 1)
            watch_sample(w, w->t_watch + k * w->freq_s);
    }
}

const struct dcgm_watch *dcgm_watch_get(struct dcgm_conn *c, dcgmGroupEntityPair_t e,
                                        unsigned short field)
{
    return watch_find(c, e, field);
}

/* waitForUpdate is accepted either way: the update is immediate. */
dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t pDcgmHandle, int waitForUpdate)
{
    struct dcgm_conn *c;
    double t;
    dcgmReturn_t r = dcgm_enter_conn(FN_dcgmUpdateAllFields, pDcgmHandle, false, &c, &t);
    (void)waitForUpdate;
    if (r != DCGM_ST_OK)
        return dcgm_leave(r);
    dcgm_watches_advance(c, t);
    for (int i = 0; i < c->n_watches; i++)
        watch_sample(&c->watches[i], t);
    return dcgm_leave(DCGM_ST_OK);
}

/*
 * dcgm_exports.h — every function the simulated libdcgm exports, with the
 * types of backend/dcgm/dcgm_api.h (the subset of NVIDIA's dcgm_agent.h the
 * monitor uses). sim/dcgm/libdcgm.map exports exactly these.
 */
#ifndef SIM_DCGM_EXPORTS_H
#define SIM_DCGM_EXPORTS_H

#include "backend/dcgm/dcgm_api.h"

dcgmReturn_t dcgmInit(void);
dcgmReturn_t dcgmShutdown(void);
const char *errorString(dcgmReturn_t result);
dcgmReturn_t dcgmStartEmbedded_v2(dcgmStartEmbeddedV2Params_v1 *params);
dcgmReturn_t dcgmStopEmbedded(dcgmHandle_t pDcgmHandle);
dcgmReturn_t dcgmConnect_v2(const char *ipAddress, dcgmConnectV2Params_v2 *connectParams,
                            dcgmHandle_t *pDcgmHandle);
dcgmReturn_t dcgmDisconnect(dcgmHandle_t pDcgmHandle);
dcgmReturn_t dcgmGetAllSupportedDevices(dcgmHandle_t pDcgmHandle,
                                        unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES], int *count);
dcgmReturn_t dcgmGetGpuInstanceHierarchy(dcgmHandle_t dcgmHandle, dcgmMigHierarchy_v2 *hierarchy);
dcgmReturn_t dcgmGroupCreate(dcgmHandle_t pDcgmHandle, int type, const char *groupName,
                             dcgmGpuGrp_t *pDcgmGrpId);
dcgmReturn_t dcgmGroupDestroy(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId);
dcgmReturn_t dcgmGroupAddEntity(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                                dcgm_field_entity_group_t entityGroupId, dcgm_field_eid_t entityId);
dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t dcgmHandle, int numFieldIds,
                                  const unsigned short *fieldIds, const char *fieldGroupName,
                                  dcgmFieldGrp_t *dcgmFieldGroupId);
dcgmReturn_t dcgmFieldGroupDestroy(dcgmHandle_t dcgmHandle, dcgmFieldGrp_t dcgmFieldGroupId);
dcgmReturn_t dcgmWatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                             dcgmFieldGrp_t fieldGroupId, long long updateFreq, double maxKeepAge,
                             int maxKeepSamples);
dcgmReturn_t dcgmUnwatchFields(dcgmHandle_t pDcgmHandle, dcgmGpuGrp_t groupId,
                               dcgmFieldGrp_t fieldGroupId);
dcgmReturn_t dcgmUpdateAllFields(dcgmHandle_t pDcgmHandle, int waitForUpdate);
dcgmReturn_t dcgmEntitiesGetLatestValues(dcgmHandle_t pDcgmHandle, dcgmGroupEntityPair_t entities[],
                                         unsigned int entityCount, unsigned short fields[],
                                         unsigned int fieldCount, unsigned int flags,
                                         dcgmFieldValue_v2 values[]);
dcgmReturn_t dcgmProfGetSupportedMetricGroups(dcgmHandle_t dcgmHandle,
                                              dcgmProfGetMetricGroups_v3 *metricGroups);

/* Not a DCGM function: calls this process made to the named function (NULL:
 * all of them), for tests. */
unsigned long migmon_dcgm_sim_call_count(const char *name);

#endif

/*
 * prom_pods.c — a device's pod, namespace and container labels
 * (prom_pods.h). A device no container holds gets none of them; so does a
 * device that containers of more than one pod hold (a shared GPU), since
 * its values cannot be split among them.
 */
#include "export/prom_pods.h"

#include "system/podres.h"

void prom_pod_labels(struct prom_ctx *c, bool *first, const struct device *d)
{
    bool shared;
    const struct podres_dev *h = podres_holder(c->pods, d, &shared);
    if (!h)
        return;
    if (h->pod[0])
        prom_lab_add(c, first, "pod", h->pod);
    if (h->ns[0])
        prom_lab_add(c, first, "namespace", h->ns);
    if (h->container[0])
        prom_lab_add(c, first, "container", h->container);
}

/*
 * prom_pods.c — a device's pod, namespace and container labels
 * (prom_pods.h). A device no container holds gets none of them; so does a
 * device that containers of more than one pod hold (a shared GPU), since
 * its values cannot be split among them. A process's series name its own
 * pod instead, from the UID its cgroup gives and the kubelet's log
 * directories (podres_scan_logs).
 */
#include "export/prom_pods.h"

#include "system/podres.h"

void prom_pod_labels(struct prom_ctx *c, bool *first, const struct device *d)
{
    if (d->pod.name[0]) { /* a fleet's device: the pod its own series named */
        prom_lab_add(c, first, "pod", d->pod.name);
        if (d->pod.ns[0])
            prom_lab_add(c, first, "namespace", d->pod.ns);
        if (d->pod.container[0])
            prom_lab_add(c, first, "container", d->pod.container);
        return;
    }
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

bool prom_pod_of(const struct prom_ctx *c, const struct device *d, const char **ns,
                 const char **pod)
{
    if (d->pod.name[0]) {
        *pod = d->pod.name;
        *ns = d->pod.ns;
        return true;
    }
    bool shared;
    const struct podres_dev *h = podres_holder(c->pods, d, &shared);
    if (!h || !h->pod[0])
        return false;
    *pod = h->pod;
    *ns = h->ns;
    return true;
}

void prom_pod_process_labels(struct prom_ctx *c, const char *uid)
{
    const struct podres_dev *p = podres_pod_of(c->pod_logs, uid);
    if (!p)
        return;
    prom_label(c, "pod", p->pod);
    prom_label(c, "namespace", p->ns);
}

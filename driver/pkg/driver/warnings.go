package driver

import (
	"context"
	"slices"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
)

// ReasonStorageClassParameters is the reason of the Warning Event about ignored or leniently read parameters.
const ReasonStorageClassParameters = "StorageClassParameters"

// warnedOnce remembers which StorageClasses (by their parameters) were logged and which claims got an Event.
type warnedOnce struct {
	mu      sync.Mutex
	classes map[string]bool
	claims  map[string]bool
}

// first reports whether key is new in set, recording it.
func (w *warnedOnce) first(set *map[string]bool, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	if (*set)[key] {
		return false
	}
	(*set)[key] = true
	return true
}

// warnParams reports StorageClass keys the driver does not read, and values read with upstream's lenient fallback:
// once per StorageClass in the log (V(2)), and once per claim as a Warning Event when the provisioner passed the
// claim's identity (--extra-create-metadata). Upstream accepts both silently; failing would break StorageClasses
// that work there.
func (c *Controller) warnParams(ctx context.Context, p scparams.Params, raw map[string]string) {
	if len(p.Unknown) == 0 && len(p.Lenient) == 0 {
		return
	}
	var parts []string
	if len(p.Unknown) > 0 {
		parts = append(parts, "ignored StorageClass parameters "+strings.Join(p.Unknown, ", ")+" (not read by "+DriverName+")")
	}
	parts = append(parts, p.Lenient...)
	msg := strings.Join(parts, "; ")
	if c.warned.first(&c.warned.classes, classKey(raw)) {
		klog.V(2).InfoS("StorageClass parameters accepted with a warning", "warning", msg, "pvcNamespace", p.PVCNamespace, "pvcName", p.PVCName)
	}
	if c.cfg.Events == nil || p.PVCName == "" || p.PVCNamespace == "" {
		return
	}
	if !c.warned.first(&c.warned.claims, p.PVCNamespace+"/"+p.PVCName) {
		return
	}
	if err := c.cfg.Events.WarnClaim(ctx, p.PVCNamespace, p.PVCName, ReasonStorageClassParameters, msg); err != nil {
		klog.V(2).InfoS("Could not post the StorageClass parameter warning", "err", err.Error())
	}
}

// classKey identifies a StorageClass by its own parameters (the provisioner adds the per-claim ones).
func classKey(raw map[string]string) string {
	var kv []string
	for k, v := range raw {
		if !strings.HasPrefix(k, "csi.storage.k8s.io/") {
			kv = append(kv, k+"="+v)
		}
	}
	slices.Sort(kv)
	return strings.Join(kv, "\x00")
}

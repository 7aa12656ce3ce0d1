package aptags

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
)

// Names shared with OpenShift's operator, so that PVs it annotated are not tagged again.
const (
	// HashAnnotation holds the hash of the tags last applied to a PV's access point.
	HashAnnotation = "efs.openshift.io/access-point-tags-hash"
	// HyperShiftLabel on the Infrastructure marks a HyperShift guest cluster; only there does the controller act.
	HyperShiftLabel = "hypershift.openshift.io/managed"
	// DriverName is the CSI driver whose PVs are tagged.
	DriverName = "efs.csi.aws.com"
)

// TagsHash is the hex SHA-256 of the tags sorted by key as "key=value;" pairs, as OpenShift's operator computes
// it. tags is not modified (it may be a lister's cached object).
func TagsHash(tags []configv1.AWSResourceTag) string {
	sorted := append([]configv1.AWSResourceTag(nil), tags...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	var b strings.Builder
	for _, t := range sorted {
		b.WriteString(t.Key + "=" + t.Value + ";")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// AccessPointID returns the access point of a volume handle "fs-…::fsap-…", or "" for handles without one.
func AccessPointID(handle string) string {
	parts := strings.Split(handle, "::")
	if len(parts) == 2 && strings.HasPrefix(parts[1], "fsap-") {
		return parts[1]
	}
	return ""
}

// NeedsTags reports whether pv is an EFS access point volume whose tags are not those of hash.
func NeedsTags(pv *corev1.PersistentVolume, hash string) bool {
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != DriverName || AccessPointID(pv.Spec.CSI.VolumeHandle) == "" {
		return false
	}
	return pv.Annotations[HashAnnotation] != hash
}

// active returns the tags to apply when the controller acts on infra: a HyperShift guest on AWS with resource
// tags (an empty list counts: its hash marks the PVs as up to date).
func active(infra *configv1.Infrastructure) ([]configv1.AWSResourceTag, bool) {
	if infra.Labels[HyperShiftLabel] != "true" {
		return nil, false
	}
	ps := infra.Status.PlatformStatus
	if ps == nil || ps.AWS == nil || ps.AWS.ResourceTags == nil {
		return nil, false
	}
	return ps.AWS.ResourceTags, true
}

package sharedvolume

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// GrantsConfigMap is the ConfigMap, in the operator's namespace, in which the cluster admin grants file systems
// and access points to namespaces. SharedVolume is a namespaced API: in the AllNamespaces install OLM aggregates
// the ClusterRoles it generates for an owned CRD into the admin and edit roles, so every project editor may create
// SharedVolumes; and a SharedVolume names any access point of any file system. Without a grant a project editor
// could mount another tenant's data. Only cluster admins can write in the operator's namespace, so the grant is
// theirs to give.
//
// Each key is a namespace, or "*" for every namespace; each value lists, separated by spaces, commas or new lines,
// file systems ("fs-0123456789abcdef0": any of its access points) and access points
// ("fs-0123456789abcdef0::fsap-0123456789abcdef0").
const GrantsConfigMap = "aws-efs-sharedvolume-grants"

// AllNamespaces is the key of GrantsConfigMap that grants to every namespace.
const AllNamespaces = "*"

// Grants reads GrantsConfigMap.
type Grants struct {
	// Namespace holds GrantsConfigMap (the operator's).
	Namespace string
	// ConfigMaps lists ConfigMaps in Namespace.
	ConfigMaps corelisters.ConfigMapLister
}

// Check returns nil when spec's access point is granted to namespace, else an error that says what the cluster
// admin must add. Malformed entries are ignored (they grant nothing) and named in the error.
func (g Grants) Check(namespace string, spec Spec) error {
	cm, err := g.ConfigMaps.ConfigMaps(g.Namespace).Get(GrantsConfigMap)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading ConfigMap %s/%s: %w", g.Namespace, GrantsConfigMap, err)
	}
	var bad []string
	if cm != nil {
		for _, key := range []string{namespace, AllNamespaces} {
			entries, malformed := parseGrants(cm.Data[key])
			bad = append(bad, malformed...)
			if slices.Contains(entries, spec.FileSystemID) || slices.Contains(entries, spec.VolumeHandle()) {
				return nil
			}
		}
	}
	msg := fmt.Sprintf("access point %s of file system %s is not granted to namespace %s: a cluster admin grants it by adding %q (or the whole file system, %q) "+
		"under the key %q of ConfigMap %s/%s", spec.AccessPointID, spec.FileSystemID, namespace, spec.VolumeHandle(), spec.FileSystemID, namespace, g.Namespace, GrantsConfigMap)
	if len(bad) > 0 {
		msg += fmt.Sprintf(" (ignored malformed entries %s: want fs-<hex> or fs-<hex>::fsap-<hex>)", strings.Join(bad, ", "))
	}
	return fmt.Errorf("%s", msg)
}

// parseGrants splits a grant value into well-formed entries and malformed ones.
func parseGrants(value string) (entries, malformed []string) {
	for _, f := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		fs, ap, hasAP := strings.Cut(f, "::")
		if !fileSystemIDRE.MatchString(fs) || (hasAP && !accessPointIDRE.MatchString(ap)) {
			malformed = append(malformed, fmt.Sprintf("%q", f))
			continue
		}
		entries = append(entries, f)
	}
	return entries, malformed
}

// isGrants reports whether obj is GrantsConfigMap.
func isGrants(obj any, namespace string) bool {
	cm, ok := obj.(*corev1.ConfigMap)
	return ok && cm.Name == GrantsConfigMap && cm.Namespace == namespace
}

package bundle

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

// RequiredAnnotations are the CSV annotations OpenShift's console and catalogs read; each must be present.
var RequiredAnnotations = []string{
	"operatorframework.io/suggested-namespace",
	"olm.skipRange",
	"olm.properties",
}

// featurePrefix starts the infrastructure feature annotations that replaced the deprecated
// operators.openshift.io/infrastructure-features list.
const featurePrefix = "features.operators.openshift.io/"

// deprecatedFeatures is the JSON list annotation OpenShift's console no longer reads.
const deprecatedFeatures = "operators.openshift.io/infrastructure-features"

// RequiredFeatures are the features.operators.openshift.io/* annotations every CSV must set to "true" or "false"
// (OpenShift's operator certification lists all ten), with the value this operator must declare where one is
// implied by what it is: an AWS CSI driver operator that supports STS.
var RequiredFeatures = map[string]string{
	"disconnected": "", "fips-compliant": "", "proxy-aware": "", "tls-profiles": "",
	"token-auth-aws": "true", "token-auth-azure": "false", "token-auth-gcp": "false",
	"cnf": "false", "cni": "false", "csi": "true",
}

// architectures are the CPU architectures every image is built for (platform.Supported); the CSV must label each
// supported.
func architectures() []string {
	var out []string
	for _, p := range platform.Supported() {
		out = append(out, p.Arch)
	}
	return out
}

// openShiftValidator checks what operator-framework/api does not: known install modes with AllNamespaces,
// every image in relatedImages (and pinned when asked), no "*" in RBAC rules, the OpenShift annotations and
// architecture labels, and the restricted security settings of the operator's pods.
func openShiftValidator(opts ValidateOptions) interfaces.Validator {
	return interfaces.ValidatorFunc(func(objs ...interface{}) []apierrors.ManifestResult {
		var out []apierrors.ManifestResult
		for _, o := range objs {
			b, ok := o.(*manifests.Bundle)
			if !ok || b.CSV == nil {
				continue
			}
			res := apierrors.ManifestResult{Name: b.CSV.Name}
			for _, check := range []func(*v1alpha1.ClusterServiceVersion) []string{
				checkInstallModes, checkRelatedImages, checkRBAC, checkAnnotations, checkArchLabels, checkSecurity,
			} {
				for _, msg := range check(b.CSV) {
					res.Add(apierrors.ErrInvalidCSV(msg, b.CSV.Name))
				}
			}
			if opts.RequireDigests {
				for _, msg := range checkDigests(b.CSV) {
					res.Add(apierrors.ErrInvalidCSV(msg, b.CSV.Name))
				}
			}
			out = append(out, res)
		}
		return out
	})
}

var knownInstallModes = map[v1alpha1.InstallModeType]bool{
	v1alpha1.InstallModeTypeOwnNamespace: true, v1alpha1.InstallModeTypeSingleNamespace: true,
	v1alpha1.InstallModeTypeMultiNamespace: true, v1alpha1.InstallModeTypeAllNamespaces: true,
}

func checkInstallModes(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	all := false
	for _, m := range csv.Spec.InstallModes {
		if !knownInstallModes[m.Type] {
			out = append(out, fmt.Sprintf("spec.installModes: unknown install mode type %q: want OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces", m.Type))
		}
		all = all || (m.Type == v1alpha1.InstallModeTypeAllNamespaces && m.Supported)
	}
	if !all {
		out = append(out, "spec.installModes: AllNamespaces is not supported: the operator watches cluster-scoped objects and must be installed for all namespaces")
	}
	return out
}

// imageUses lists every image the CSV makes the cluster pull, with where it is used.
func imageUses(csv *v1alpha1.ClusterServiceVersion) map[string][]string {
	uses := map[string][]string{}
	add := func(image, where string) {
		if image != "" {
			uses[image] = append(uses[image], where)
		}
	}
	add(csv.Annotations["containerImage"], "metadata.annotations.containerImage")
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, c := range append(append([]corev1.Container(nil), pod.InitContainers...), pod.Containers...) {
			where := fmt.Sprintf("deployment %s container %s", d.Name, c.Name)
			add(c.Image, where)
			for _, e := range c.Env {
				if strings.HasSuffix(e.Name, "_IMAGE") {
					add(e.Value, where+" env "+e.Name)
				}
			}
		}
	}
	return uses
}

func checkRelatedImages(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	listed := map[string]bool{}
	names := map[string]bool{}
	for i, ri := range csv.Spec.RelatedImages {
		if names[ri.Name] {
			out = append(out, fmt.Sprintf("spec.relatedImages[%d]: name %q is listed twice", i, ri.Name))
		}
		names[ri.Name], listed[ri.Image] = true, true
		if _, err := name.ParseReference(ri.Image); err != nil {
			out = append(out, fmt.Sprintf("spec.relatedImages[%d] (%s): %q is not an image reference: %v", i, ri.Name, ri.Image, err))
		}
	}
	uses := imageUses(csv)
	for _, im := range slices.Sorted(maps.Keys(uses)) {
		if !listed[im] {
			out = append(out, fmt.Sprintf("spec.relatedImages: missing %s, used by %s: every image the operator deploys must be listed so that disconnected clusters mirror it",
				im, strings.Join(uses[im], ", ")))
		}
	}
	return out
}

func checkDigests(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	for i, ri := range csv.Spec.RelatedImages {
		if _, err := name.NewDigest(ri.Image); err != nil {
			out = append(out, fmt.Sprintf("spec.relatedImages[%d] (%s): %q is not pinned by digest: want <repository>@sha256:<digest>", i, ri.Name, ri.Image))
		} else if strings.HasSuffix(ri.Image, "@"+PlaceholderDigest) {
			out = append(out, fmt.Sprintf("spec.relatedImages[%d] (%s): %q has the placeholder digest: want the image's real digest (%s says where it comes from)", i, ri.Name, ri.Image, ImagesFile))
		}
	}
	return out
}

func checkRBAC(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	spec := csv.Spec.InstallStrategy.StrategySpec
	check := func(kind string, perms []v1alpha1.StrategyDeploymentPermissions) {
		for i, p := range perms {
			for j, r := range p.Rules {
				where := fmt.Sprintf("%s[%d] (%s) rules[%d]", kind, i, p.ServiceAccountName, j)
				out = append(out, wildcards(where, r)...)
			}
		}
	}
	check("clusterPermissions", spec.ClusterPermissions)
	check("permissions", spec.Permissions)
	return out
}

func wildcards(where string, r rbacv1.PolicyRule) []string {
	var out []string
	for field, values := range map[string][]string{"verbs": r.Verbs, "resources": r.Resources, "apiGroups": r.APIGroups, "nonResourceURLs": r.NonResourceURLs} {
		for _, v := range values {
			if strings.Contains(v, "*") {
				out = append(out, fmt.Sprintf("%s: %s contains %q: list the exact %s the operator needs", where, field, v, field))
			}
		}
	}
	sort.Strings(out)
	return out
}

func checkAnnotations(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	for _, k := range RequiredAnnotations {
		if _, ok := csv.Annotations[k]; !ok {
			out = append(out, fmt.Sprintf("metadata.annotations: missing %s", k))
		}
	}
	if v, ok := csv.Annotations["olm.skipRange"]; ok {
		if _, err := semver.ParseRange(v); err != nil {
			out = append(out, fmt.Sprintf("metadata.annotations olm.skipRange %q: want a semver range such as '>=4.9.0-0 <5.0.0': %v", v, err))
		}
	}
	if v, ok := csv.Annotations["olm.properties"]; ok {
		var props []struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		}
		found := false
		if err := json.Unmarshal([]byte(v), &props); err != nil {
			out = append(out, fmt.Sprintf("metadata.annotations olm.properties %q: want a JSON list of {type, value}: %v", v, err))
		}
		for _, p := range props {
			found = found || p.Type == "olm.maxOpenShiftVersion"
		}
		if !found {
			out = append(out, "metadata.annotations olm.properties: no olm.maxOpenShiftVersion property")
		}
	}
	return append(out, checkFeatures(csv.Annotations)...)
}

// checkFeatures requires every features.operators.openshift.io/* annotation of RequiredFeatures with "true" or
// "false" (and the implied value where there is one), refuses unknown feature names, and refuses the deprecated
// infrastructure-features list.
func checkFeatures(ann map[string]string) []string {
	var out []string
	if _, ok := ann[deprecatedFeatures]; ok {
		out = append(out, fmt.Sprintf("metadata.annotations: %s is deprecated: declare each feature as %s<feature>: \"true\" or \"false\" instead", deprecatedFeatures, featurePrefix))
	}
	names := slices.Sorted(maps.Keys(RequiredFeatures))
	for _, n := range names {
		k := featurePrefix + n
		v, ok := ann[k]
		switch want := RequiredFeatures[n]; {
		case !ok:
			out = append(out, fmt.Sprintf("metadata.annotations: missing %s: want \"true\" or \"false\"", k))
		case v != "true" && v != "false":
			out = append(out, fmt.Sprintf("metadata.annotations %s %q: want \"true\" or \"false\"", k, v))
		case want != "" && v != want:
			out = append(out, fmt.Sprintf("metadata.annotations %s %q: want %q for this operator", k, v, want))
		}
	}
	var unknown []string
	for k := range ann {
		if n, ok := strings.CutPrefix(k, featurePrefix); ok {
			if _, known := RequiredFeatures[n]; !known {
				unknown = append(unknown, k)
			}
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		out = append(out, fmt.Sprintf("metadata.annotations: unknown feature annotation %s: want one of %s%s", k, featurePrefix, strings.Join(names, ", "+featurePrefix)))
	}
	return out
}

func checkArchLabels(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	archs := architectures()
	for _, a := range archs {
		k := "operatorframework.io/arch." + a
		if csv.Labels[k] != "supported" {
			out = append(out, fmt.Sprintf("metadata.labels: %s is %q: want \"supported\" (every image is built for %s)", k, csv.Labels[k], strings.Join(archs, ", ")))
		}
	}
	return out
}

// checkSecurity requires the restricted-v2 settings: a non-root pod with the RuntimeDefault seccomp profile, and
// containers without privilege escalation or capabilities, on a read-only root file system.
func checkSecurity(csv *v1alpha1.ClusterServiceVersion) []string {
	var out []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		where := "deployment " + d.Name
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			out = append(out, where+": securityContext.runAsNonRoot must be true")
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			out = append(out, where+": securityContext.seccompProfile.type must be RuntimeDefault")
		}
		for _, c := range append(append([]corev1.Container(nil), pod.InitContainers...), pod.Containers...) {
			cw := where + " container " + c.Name
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				out = append(out, cw+": securityContext.allowPrivilegeEscalation must be false")
			}
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				out = append(out, cw+": securityContext.readOnlyRootFilesystem must be true")
			}
			if sc == nil || sc.Capabilities == nil || !dropsAll(sc.Capabilities.Drop) || len(sc.Capabilities.Add) > 0 {
				out = append(out, cw+": securityContext.capabilities must drop ALL and add none")
			}
			if sc != nil && sc.Privileged != nil && *sc.Privileged {
				out = append(out, cw+": securityContext.privileged must not be true")
			}
		}
	}
	return out
}

func dropsAll(caps []corev1.Capability) bool {
	for _, c := range caps {
		if c == "ALL" {
			return true
		}
	}
	return false
}

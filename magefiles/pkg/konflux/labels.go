package konflux

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/containerfile"
)

// RequiredLabels are the labels Red Hat's Conforma (Enterprise Contract) release policy requires of every image:
// rule data required_labels of release-engineering/rhtap-ec-policy@df1123f847bde0108ec39d6a707d29e262735b36
// data/rule_data.yml, read by conforma/policy@7211d0329e93fda0a6d6d3d33c3909fc6a7681ca
// policy/release/labels/labels.rego (labels.required_labels). An image with the label
// operators.operatorframework.io.index.configs.v1 counts as a file-based catalog and is held to
// fbc_required_labels instead, which is empty in that data; we hold the catalog to the full list anyway.
var RequiredLabels = []string{
	"com.redhat.component", "description", "distribution-scope", "io.k8s.description", "name", "release", "url",
	"vcs-ref", "vcs-type", "vendor", "version", "org.opencontainers.image.created", "cpe",
}

// RequiredVendor is the only value the same rule data accepts for vendor.
const RequiredVendor = "Red Hat, Inc."

// DisallowedInherited are the labels the policy refuses to see inherited from the base image
// (disallowed_inherited_labels of the same data): each image sets them in its own final stage.
var DisallowedInherited = []string{"description", "io.k8s.description", "io.k8s.display-name", "io.openshift.tags", "summary", "name", "com.redhat.component"}

// SetByBuildTask are the required labels Konflux's build task writes itself: vcs-ref (the commit) in the buildah
// step's default labels (konflux-ci/build-definitions@6904ca204e66889a2dc35ad7d860d56632fd17be,
// archived-tasks/sast-coverity-check-oci-ta/0.3, the copy of the buildah build step: build-date, architecture,
// vcs-type, vcs-ref), and org.opencontainers.image.created, which the rule data's own description says "must
// always be set by the Konflux build task" from SOURCE_DATE_EPOCH. version and release are not among them.
var SetByBuildTask = []string{"vcs-ref", "org.opencontainers.image.created"}

// LabelledImages maps each Containerfile Konflux builds to the Go module whose VERSION is its version label.
var LabelledImages = map[string]string{
	"images/aws-efs-utils-base/Containerfile":                  "driver",
	"images/aws-efs-csi-driver/Containerfile":                  "driver",
	"images/aws-efs-csi-driver-operator/Containerfile":         "operator",
	"operator/manifests/bundle.Containerfile":                  "operator",
	"images/aws-efs-csi-driver-operator-catalog/Containerfile": "operator",
}

// CheckLabels returns every required label a Containerfile's final stage lacks (with its ARG defaults, as a
// plain build gives them), a vendor other than RequiredVendor, and a version other than its module's VERSION.
func CheckLabels(root string) []string {
	var problems []string
	for file, module := range LabelledImages {
		f, err := containerfile.ParseFile(filepath.Join(root, file))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		labels := containerfile.Labels(f.Final())
		for _, l := range append(append([]string(nil), RequiredLabels...), DisallowedInherited...) {
			if labels[l] == "" && !contains(SetByBuildTask, l) {
				problems = append(problems, fmt.Sprintf("%s: the final stage has no LABEL %s, which Red Hat's release policy requires (set, not inherited)", file, l))
			}
		}
		if v := labels["vendor"]; v != RequiredVendor {
			problems = append(problems, fmt.Sprintf("%s: LABEL vendor=%q: want %q", file, v, RequiredVendor))
		}
		data, err := os.ReadFile(filepath.Join(root, module, "VERSION"))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if want := strings.TrimSpace(string(data)); labels["version"] != want {
			problems = append(problems, fmt.Sprintf("%s: LABEL version=%q (ARG VERSION default): want %s/VERSION %q", file, labels["version"], module, want))
		}
	}
	return problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

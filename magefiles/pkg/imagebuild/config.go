package imagebuild

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/platform"
)

// DistributionScope is the distribution-scope label, which Red Hat's release policy requires (magefiles/pkg/konflux):
// the images are shipped publicly.
const DistributionScope = "public"

// SourceURL is the repository the images are built from (org.opencontainers.image.source).
const SourceURL = "https://github.com/openshift/aws-efs-csi"

// BuildLabels are the labels whose values come from the build (module version, commit, build time), not from the
// spec: a Containerfile does not repeat them.
var BuildLabels = []string{"version", "release", "vcs-ref", "org.opencontainers.image.version", "org.opencontainers.image.revision", "org.opencontainers.image.created"}

// Labels returns the labels an image of spec carries, given the module's version, the release and the commit: the
// labels Red Hat's container guidelines ask for and OCI's, none of them inherited from the base.
func Labels(spec Spec, version, release, commit string, created time.Time) map[string]string {
	l := map[string]string{
		"name":                                 spec.Name,
		"com.redhat.component":                 spec.Name + "-container",
		"vendor":                               Vendor,
		"url":                                  SourceURL,
		"distribution-scope":                   DistributionScope,
		"maintainer":                           Maintainer,
		"summary":                              spec.Config.DisplayName,
		"description":                          spec.Config.Description,
		"io.k8s.display-name":                  spec.Config.DisplayName,
		"io.k8s.description":                   spec.Config.Description,
		"io.openshift.tags":                    spec.Config.Tags,
		"version":                              version,
		"release":                              release,
		"vcs-ref":                              commit,
		"vcs-type":                             "git",
		"org.opencontainers.image.title":       spec.Name,
		"org.opencontainers.image.description": spec.Config.Description,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.revision":    commit,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":      SourceURL,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.vendor":      Vendor,
	}
	if spec.Config.CPE != "" {
		l["cpe"] = spec.Config.CPE
	}
	return l
}

// configure writes spec's config over the base's: labels (the base's are dropped: an image must not claim the
// base's name, component or version), entrypoint (the base's command is dropped with it), user and environment;
// the creation time is the build's fixed time and the media types are OCI.
func (a *assembler) configure(img v1.Image, spec Spec, p platform.Platform) (v1.Image, error) {
	st, ok := a.opts.Stamps[spec.Module]
	if !ok {
		return nil, fmt.Errorf("no version stamp for module %q", spec.Module)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	labels := map[string]string{}
	for k, v := range Labels(spec, st.Version, a.opts.release(st), st.Commit, a.opts.MTime) {
		labels[k] = v
	}
	for k, v := range spec.Config.Labels {
		labels[k] = v
	}
	cf.Config.Labels = labels
	if len(spec.Config.Entrypoint) > 0 {
		cf.Config.Entrypoint = append([]string(nil), spec.Config.Entrypoint...)
		cf.Config.Cmd = nil
	}
	if spec.Config.Cmd != nil {
		cf.Config.Cmd = append([]string(nil), spec.Config.Cmd...)
	}
	if spec.Config.User != "" {
		cf.Config.User = spec.Config.User
	}
	cf.Config.Env = mergeEnv(cf.Config.Env, spec.Config.Env)
	cf.OS, cf.Architecture = p.OS, p.Arch
	cf.Created = v1.Time{Time: a.opts.MTime}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// mergeEnv overrides base entries by name and keeps the rest in order; new names are appended sorted.
func mergeEnv(base, over []string) []string {
	set := map[string]string{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = kv
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := set[k]; ok {
			out = append(out, v)
			delete(set, k)
			continue
		}
		out = append(out, kv)
	}
	return append(out, slices.Sorted(maps.Values(set))...)
}

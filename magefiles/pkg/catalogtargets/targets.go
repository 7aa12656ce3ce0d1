// Package catalogtargets holds the mage targets of the catalog namespace; magefile.go imports it with
// `mage:import catalog`, so `go tool mage catalog:render` runs Render (and `go tool mage catalog` stays the local
// catalog of the magefile).
package catalogtargets

import (
	"context"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/catalog"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/workspace"
)

// Render renders every OpenShift version's catalog template
// (images/aws-efs-csi-driver-operator-catalog/v<version>/catalog-template.yaml) into the catalog committed beside
// it (v<version>/catalog/aws-efs-csi-driver-operator/catalog.yaml), the catalog that version's Konflux component
// builds: it pulls each bundle image the template names from its registry (credentials from the Docker/podman
// config, as `opm` does), renders it as `opm alpha render-template basic` does at the version's migrate level,
// writes the released names of .tekton/images-mirror-set.yaml, and writes a version's catalog only when `opm
// validate` would accept it. It refuses, writing nothing, while any template names the all-zero placeholder digest
// (before the bundle component's first push). Run it after each bundle nudge and commit the result; `go tool mage
// konflux` lists catalogs not rendered or older than their template. See docs/release.md#catalogs.
func Render(ctx context.Context) error {
	root, err := workspace.Root(".")
	if err != nil {
		return err
	}
	return catalog.RenderFragments(ctx, root, &catalog.Registry{Keychain: authn.DefaultKeychain}, os.Stdout)
}

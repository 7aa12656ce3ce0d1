package olm

import (
	"context"
	"io"

	"github.com/openshift/aws-efs-csi/operator/test/e2e/cluster"
)

// Versions. OLM v0.38.0 is the release the issue names; opm is operator-registry v1.69.0, the version the
// magefiles render and validate the catalog with (OLM v0.38.0 itself links operator-registry v1.61.0 as a
// library; the registry gRPC API between the two is the same).
const (
	Version         = "v0.38.0"
	RegistryVersion = "v1.69.0"

	olmModule      = "github.com/operator-framework/operator-lifecycle-manager"
	registryModule = "github.com/operator-framework/operator-registry"
)

// Tools are OLM's commands and opm, each built from its own module (go.mod, go.sum and replace directives) as
// their release builds do: CGO off, opm with containers_image_openpgp (its Makefile's tag; the json1 tag of both
// builds only matters to sqlite with cgo).
var Tools = struct{ OLM, Catalog, CPB, OPM cluster.Tool }{
	OLM: cluster.Tool{Name: "olm", Module: olmModule, Version: Version, Package: "./cmd/olm",
		VersionVar: olmModule + "/pkg/version.OLMVersion"},
	Catalog: cluster.Tool{Name: "catalog", Module: olmModule, Version: Version, Package: "./cmd/catalog",
		VersionVar: olmModule + "/pkg/version.OLMVersion"},
	// cpb is the copier OLM's bundle unpack Job puts into the bundle image's container.
	CPB: cluster.Tool{Name: "cpb", Module: olmModule, Version: Version, Package: "./util/cpb"},
	OPM: cluster.Tool{Name: "opm", Module: registryModule, Version: RegistryVersion, Package: "./cmd/opm",
		VersionVar: registryModule + "/cmd/opm/version.opmVersion", Tags: []string{"containers_image_openpgp"}},
}

// binaries are the built tools' paths.
type binaries struct{ OLM, Catalog, CPB, OPM string }

// buildTools builds (or finds in toolsDir) every tool.
func buildTools(ctx context.Context, toolsDir string, log io.Writer) (binaries, error) {
	var b binaries
	for _, t := range []struct {
		tool cluster.Tool
		path *string
	}{{Tools.OLM, &b.OLM}, {Tools.Catalog, &b.Catalog}, {Tools.CPB, &b.CPB}, {Tools.OPM, &b.OPM}} {
		p, err := cluster.BuildTool(ctx, toolsDir, t.tool, log)
		if err != nil {
			return b, err
		}
		*t.path = p
	}
	return b, nil
}

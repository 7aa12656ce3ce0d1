package bundle

import (
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// Report is what the validators said about a bundle: any error fails the bundle, warnings are printed.
type Report struct {
	Errors   []string
	Warnings []string
}

// Err returns nil when there are no errors, else one error listing them.
func (r Report) Err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	return fmt.Errorf("the bundle failed validation:\n  - %s", strings.Join(r.Errors, "\n  - "))
}

// ValidateOptions tune the checks.
type ValidateOptions struct {
	// RequireDigests makes an image not pinned by digest an error.
	RequireDigests bool
	// MinKubeVersion is the Kubernetes version whose removed APIs the deprecated-API validator looks for.
	K8sVersion string
}

// Validate loads the bundle in dir with operator-framework/api and runs its validators (the default bundle
// validators: CSV, CRDs, bundle; plus objects, good practices, standard capabilities and categories, deprecated
// APIs) and this project's OpenShift checks. An error is returned only when the bundle cannot be loaded.
func Validate(dir string, opts ValidateOptions) (Report, error) {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return Report{}, fmt.Errorf("loading the bundle in %s: %w", dir, err)
	}
	validators := interfaces.Validators{
		validation.ClusterServiceVersionValidator,
		validation.CustomResourceDefinitionValidator,
		validation.BundleValidator,
		validation.ObjectValidator,
		validation.GoodPracticesValidator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		openShiftValidator(opts),
	}
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": opts.K8sVersion})
	var r Report
	for _, res := range validators.Validate(objs...) {
		for _, e := range res.Errors {
			r.Errors = append(r.Errors, message(res, e))
		}
		for _, w := range res.Warnings {
			r.Warnings = append(r.Warnings, message(res, w))
		}
	}
	return r, nil
}

func message(res apierrors.ManifestResult, e apierrors.Error) string {
	if res.Name == "" {
		return e.Error()
	}
	return res.Name + ": " + e.Error()
}

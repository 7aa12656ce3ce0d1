package hooks

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/klog/v2"
)

// infrastructureName is the name of the cluster's singleton Infrastructure object.
const infrastructureName = "cluster"

// TagsArg returns the driver's --tags argument for infra: the user's AWS resource tags from
// status.platformStatus.aws.resourceTags, then kubernetes.io/cluster/<infrastructureName>:owned, space-separated as
// key:value. A backslash escapes ':', ' ' and '\' inside a key or value, as the driver's --tags parser reads them
// (driver/pkg/provision.ParseTags); tags with an empty key or value, or a tab or newline, cannot be passed and are
// skipped.
func TagsArg(infra *configv1.Infrastructure) (string, error) {
	name := infra.Status.InfrastructureName
	if name == "" {
		return "", fmt.Errorf("Infrastructure %q has an empty status.infrastructureName: want the cluster ID used in the kubernetes.io/cluster/<ID> tag", infra.Name)
	}
	var parts []string
	if ps := infra.Status.PlatformStatus; ps != nil && ps.AWS != nil {
		for _, t := range ps.AWS.ResourceTags {
			if t.Key == "" || t.Value == "" || strings.ContainsAny(t.Key+t.Value, "\t\n\r") {
				klog.InfoS("Skipping an AWS resource tag that cannot be passed to the driver", "key", t.Key)
				continue
			}
			parts = append(parts, tagEscaper.Replace(t.Key)+":"+tagEscaper.Replace(t.Value))
		}
	}
	parts = append(parts, "kubernetes.io/cluster/"+name+":owned")
	return "--tags=" + strings.Join(parts, " "), nil
}

// tagEscaper escapes the separators of the driver's --tags form inside a key or value.
var tagEscaper = strings.NewReplacer(`\`, `\\`, ":", `\:`, " ", `\ `)

// setTags replaces every --tags= argument of the driver container with one built by TagsArg.
func setTags(d *appsv1.Deployment, infra *configv1.Infrastructure) error {
	arg, err := TagsArg(infra)
	if err != nil {
		return err
	}
	c := container(&d.Spec.Template.Spec, DriverContainer)
	if c == nil {
		return fmt.Errorf("tags hook: no container %q in Deployment %s", DriverContainer, d.Name)
	}
	args := c.Args[:0:0]
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--tags=") {
			args = append(args, a)
		}
	}
	c.Args = append(args, arg)
	return nil
}

// CustomTags returns the Deployment hook that passes the Infrastructure's resource tags to the driver.
func CustomTags(infras configlisters.InfrastructureLister) func(*opv1.OperatorSpec, *appsv1.Deployment) error {
	return func(_ *opv1.OperatorSpec, d *appsv1.Deployment) error {
		infra, err := infras.Get(infrastructureName)
		if err != nil {
			return fmt.Errorf("reading Infrastructure %q for the driver's --tags: %w", infrastructureName, err)
		}
		return setTags(d, infra)
	}
}

package hooks

import (
	"fmt"
	"net/url"

	configv1 "github.com/openshift/api/config/v1"
	opv1 "github.com/openshift/api/operator/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	corev1 "k8s.io/api/core/v1"
)

// endpointEnv maps the AWS service names of Infrastructure.status.platformStatus.aws.serviceEndpoints that the
// driver and efs-utils call to the standard service-specific endpoint variables of the AWS SDKs: aws-sdk-go-v2
// (config.LoadDefaultConfig, which the driver uses for every client, including the STS client behind web
// identity credentials) reads AWS_ENDPOINT_URL_<service ID>; efs-utils' mount.efs passes AWS_ENDPOINT_URL_EFS and
// AWS_ENDPOINT_URL_EC2 to botocore as endpoint_url in its One Zone fallback and uses AWS_ENDPOINT_URL_STS for web
// identity credentials. Other services in the list are not called by the driver and are ignored.
var endpointEnv = map[string]string{
	"elasticfilesystem": "AWS_ENDPOINT_URL_EFS",
	"ec2":               "AWS_ENDPOINT_URL_EC2",
	"sts":               "AWS_ENDPOINT_URL_STS",
}

// EndpointEnvNames lists the variables ServiceEndpointsEnv may set.
func EndpointEnvNames() []string {
	return []string{"AWS_ENDPOINT_URL_EFS", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_STS"}
}

// ServiceEndpointsEnv returns the driver's endpoint variables for the custom AWS endpoints of infra (private,
// GovCloud or test endpoints), in the order EndpointEnvNames lists them, then AWS_REGION, the cluster's region,
// when there is any. A URL that is not an absolute https URL
// is an error naming the field, as the Infrastructure API itself refuses it.
func ServiceEndpointsEnv(infra *configv1.Infrastructure) ([]corev1.EnvVar, error) {
	ps := infra.Status.PlatformStatus
	if ps == nil || ps.AWS == nil {
		return nil, nil
	}
	values := map[string]string{}
	for i, ep := range ps.AWS.ServiceEndpoints {
		name, ok := endpointEnv[ep.Name]
		if !ok {
			continue
		}
		u, err := url.Parse(ep.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("Infrastructure %q status.platformStatus.aws.serviceEndpoints[%d] (%s) url %q: want an absolute https:// URL",
				infra.Name, i, ep.Name, ep.URL)
		}
		values[name] = ep.URL
	}
	var env []corev1.EnvVar
	for _, name := range EndpointEnvNames() {
		if v, ok := values[name]; ok {
			env = append(env, corev1.EnvVar{Name: name, Value: v})
		}
	}
	// Custom endpoints are regional: the SDKs sign for AWS_REGION, which the driver otherwise learns from instance
	// metadata; where that is unreachable (IMDS turned off, or no EC2 at all) the controller could not start.
	if len(env) > 0 && ps.AWS.Region != "" {
		env = append(env, corev1.EnvVar{Name: "AWS_REGION", Value: ps.AWS.Region})
	}
	return env, nil
}

// setServiceEndpoints sets the endpoint variables of infra on the driver container of spec.
func setServiceEndpoints(spec *corev1.PodSpec, infra *configv1.Infrastructure) error {
	env, err := ServiceEndpointsEnv(infra)
	if err != nil {
		return err
	}
	if container(spec, DriverContainer) == nil {
		return fmt.Errorf("service endpoints hook: no container %q in the pod template", DriverContainer)
	}
	for _, e := range env {
		setEnv(spec, DriverContainer, e.Name, e.Value)
	}
	return nil
}

// ServiceEndpoints returns a workload hook (Deployment or DaemonSet) that points the driver, and the mount.efs and
// botocore it runs, at the Infrastructure's custom endpoints for EFS, EC2 and STS.
func ServiceEndpoints[T any](infras configlisters.InfrastructureLister, podSpec func(T) *corev1.PodSpec) func(*opv1.OperatorSpec, T) error {
	return func(_ *opv1.OperatorSpec, obj T) error {
		infra, err := infras.Get(infrastructureName)
		if err != nil {
			return fmt.Errorf("reading Infrastructure %q for the AWS service endpoints: %w", infrastructureName, err)
		}
		return setServiceEndpoints(podSpec(obj), infra)
	}
}

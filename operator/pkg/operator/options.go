package operator

import (
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/rest"

	"github.com/openshift/aws-efs-csi/operator/pkg/config"
	"github.com/openshift/aws-efs-csi/operator/pkg/presence"
)

// ClusterCSIDriverName is the ClusterCSIDriver this operator serves.
const ClusterCSIDriverName = "efs.csi.aws.com"

// ControllerServiceAccount is the controller Deployment's ServiceAccount (assets/driver/controller_sa.yaml), the
// one OpenShift's operators bound their provisioner roles to.
const ControllerServiceAccount = "aws-efs-csi-driver-controller-sa"

// Controller names; each prefixes the conditions it sets on the ClusterCSIDriver.
const (
	StaticResourcesController        = "AWSEFSDriverStaticResourcesController"
	ControllerServiceController      = "AWSEFSDriverControllerServiceController"
	NodeServiceController            = "AWSEFSDriverNodeServiceController"
	CredentialsRequestController     = "AWSEFSCredentialsRequestController"
	NodeCredentialsRequestController = "AWSEFSNodeCredentialsRequestController"
	ConfigObserverController         = "AWSEFSDriverCSIConfigObserverController"
	UninstallController              = "AWSEFSDriverUninstallController"
	// LegacyCredentialsRequestController is what OpenShift's 4.x operators called the controller
	// CredentialsRequest controller (openshift/aws-efs-csi-driver-operator@068355f release-4.14
	// pkg/operator/starter.go). The ROSA documentation tells admins to wait for
	// AWSEFSDriverCredentialsRequestControllerAvailable, so that condition is kept, written with
	// CredentialsRequestController's values.
	LegacyCredentialsRequestController = "AWSEFSDriverCredentialsRequestController"
)

// Options are the operator's inputs.
type Options struct {
	// Config was read from the environment at start-up.
	Config config.Config
	// KubeConfig reaches the API server (JSON content type, safe for custom resources).
	KubeConfig *rest.Config
	// Recorder records the operator's events.
	Recorder events.Recorder
	// Missing is the ClusterCSIDriver-missing gauge.
	Missing presence.Gauge
	// Resync is the informers' and controllers' resync period; 20 minutes when zero.
	Resync time.Duration
}

func (o Options) resync() time.Duration {
	if o.Resync == 0 {
		return 20 * time.Minute
	}
	return o.Resync
}

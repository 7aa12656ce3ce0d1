module github.com/openshift/aws-efs-csi/driver

go 1.26

require (
	github.com/spf13/pflag v1.0.10
	k8s.io/klog/v2 v2.130.1
)

require github.com/go-logr/logr v1.4.1 // indirect

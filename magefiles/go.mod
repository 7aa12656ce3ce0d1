module github.com/openshift/aws-efs-csi/magefiles

go 1.26.0

require (
	github.com/magefile/mage v1.17.2
	golang.org/x/mod v0.42.0
	golang.org/x/sync v0.19.0
)

tool github.com/magefile/mage

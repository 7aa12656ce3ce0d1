package testrun

import "github.com/openshift/aws-efs-csi/testharness/pkg/sysdeps"

// OLMNeeds is what the image of OLM's commands needs from Debian: the bundle unpack Job runs /bin/cp in it, and
// busybox-static is that cp (as OLM's own image has distroless busybox). The stack suite's stand-in for
// Kubernetes' e2e test images (busybox) is the same binary.
var OLMNeeds = []sysdeps.Requirement{{Package: "busybox-static", File: "/bin/busybox"}}

package sharedvolume

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and finalizer of the community operator, kept so that its objects are adopted.
const (
	LabelOwned          = "openshift.io/aws-efs-operator-owned"
	LabelOwnerNamespace = "openshift.io/aws-efs-operator-shared-volume-owner-namespace"
	LabelOwnerName      = "openshift.io/aws-efs-operator-shared-volume-owner-name"
	Finalizer           = "finalizer.awsefs.managed.openshift.io"
	// StorageClassName is the class of the PV and PVC, so that nothing else binds to them.
	StorageClassName = "efs-sc"
	// DriverName is the CSI driver serving the volumes.
	DriverName = "efs.csi.aws.com"
)

var (
	fileSystemIDRE  = regexp.MustCompile(`^fs-[0-9a-f]+$`)
	accessPointIDRE = regexp.MustCompile(`^fsap-[0-9a-f]+$`)
)

// Validate checks the spec as the CRD schema does, for objects stored before the schema validated them.
func (s Spec) Validate() error {
	if !fileSystemIDRE.MatchString(s.FileSystemID) {
		return fmt.Errorf("spec.fileSystemID %q: want fs- followed by lower-case hex digits, e.g. fs-0123456789abcdef0", s.FileSystemID)
	}
	if !accessPointIDRE.MatchString(s.AccessPointID) {
		return fmt.Errorf("spec.accessPointID %q: want fsap- followed by lower-case hex digits, e.g. fsap-0123456789abcdef0", s.AccessPointID)
	}
	return nil
}

// VolumeHandle is the driver's handle for the access point: "<fileSystemID>::<accessPointID>".
func (s Spec) VolumeHandle() string { return s.FileSystemID + "::" + s.AccessPointID }

// PVName is the PersistentVolume of a SharedVolume: pv-<namespace>-<name>.
func PVName(sv *SharedVolume) string { return "pv-" + sv.Namespace + "-" + sv.Name }

// PVCName is the PersistentVolumeClaim of a SharedVolume, in its namespace: pvc-<name>.
func PVCName(sv *SharedVolume) string { return "pvc-" + sv.Name }

func ownerLabels(sv *SharedVolume) map[string]string {
	return map[string]string{LabelOwned: "true", LabelOwnerNamespace: sv.Namespace, LabelOwnerName: sv.Name}
}

// capacity is required by the API but means nothing for EFS, which has no size limit.
var capacity = resource.MustParse("1Gi")

// DesiredPV returns the PersistentVolume for sv.
func DesiredPV(sv *SharedVolume) *corev1.PersistentVolume {
	fs := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: PVName(sv), Labels: ownerLabels(sv)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			VolumeMode:                    &fs,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              StorageClassName,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: DriverName, VolumeHandle: sv.Spec.VolumeHandle()},
			},
		},
	}
}

// DesiredPVC returns the PersistentVolumeClaim for sv, pre-bound to its PV.
func DesiredPVC(sv *SharedVolume) *corev1.PersistentVolumeClaim {
	class := StorageClassName
	fs := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: PVCName(sv), Namespace: sv.Namespace, Labels: ownerLabels(sv)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: capacity}},
			StorageClassName: &class,
			VolumeMode:       &fs,
			VolumeName:       PVName(sv),
		},
	}
}

// handleOf returns the volume handle of an existing PV, accepting the community operator's legacy form (a bare
// file system ID with an accesspoint= mount option).
func handleOf(pv *corev1.PersistentVolume) string {
	if pv.Spec.CSI == nil {
		return ""
	}
	h := pv.Spec.CSI.VolumeHandle
	if fileSystemIDRE.MatchString(h) {
		for _, o := range pv.Spec.MountOptions {
			if len(o) > len("accesspoint=") && o[:len("accesspoint=")] == "accesspoint=" {
				return h + "::" + o[len("accesspoint="):]
			}
		}
	}
	return h
}

// hasLabels reports whether obj carries all of want.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

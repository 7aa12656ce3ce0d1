package sharedvolume

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersionResource of SharedVolumes.
var GroupVersionResource = schema.GroupVersionResource{Group: "aws-efs.managed.openshift.io", Version: "v1alpha1", Resource: "sharedvolumes"}

// Kind is the SharedVolume kind.
const Kind = "SharedVolume"

// Phase is the lifecycle phase of a SharedVolume.
type Phase string

// Phases, as the community operator reported them.
const (
	PhasePending  Phase = "Pending"
	PhaseReady    Phase = "Ready"
	PhaseDeleting Phase = "Deleting"
	PhaseFailed   Phase = "Failed"
)

// SharedVolume exposes an existing EFS access point in its namespace as a PersistentVolumeClaim.
type SharedVolume struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitzero"`
}

// Spec names the file system and access point; both are immutable (the CRD enforces it).
type Spec struct {
	FileSystemID  string `json:"fileSystemID"`
	AccessPointID string `json:"accessPointID"`
}

// Status reports the phase and the claim pods should use.
type Status struct {
	ClaimRef *corev1.TypedLocalObjectReference `json:"claimRef,omitempty"`
	Phase    Phase                             `json:"phase,omitempty"`
	Message  string                            `json:"message,omitempty"`
}

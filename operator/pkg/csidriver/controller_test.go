package csidriver

import (
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/v1helpers"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/openshift/aws-efs-csi/operator/assets"
)

func shipped(t *testing.T) *storagev1.CSIDriver {
	t.Helper()
	b, err := assets.Read(assets.CSIDriver)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// community is the CSIDriver as the community aws-efs-operator left it: same spec, owned by the SharedVolume CRD.
func community() *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "efs.csi.aws.com", UID: "u-1", Labels: map[string]string{"openshift.io/aws-efs-operator-owned": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition",
				Name: "sharedvolumes.aws-efs.managed.openshift.io", UID: "crd-uid"}}},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}},
	}
}

// run syncs the controller against a fake API holding existing and returns the verbs of the writes it made.
func run(t *testing.T, existing ...runtime.Object) (*kubefake.Clientset, []string) {
	t.Helper()
	kube := kubefake.NewClientset(existing...)
	inf := informers.NewSharedInformerFactory(kube, 0).Storage().V1().CSIDrivers()
	for _, o := range existing {
		if err := inf.Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	opClient := v1helpers.NewFakeOperatorClientWithObjectMeta(&metav1.ObjectMeta{Name: "efs.csi.aws.com"},
		&opv1.OperatorSpec{ManagementState: opv1.Managed}, &opv1.OperatorStatus{}, nil)
	c := &controller{operatorClient: opClient, in: Inputs{Required: shipped(t), Kube: kube, CSIDrivers: inf.Lister(), Informer: inf.Informer()}}
	kube.ClearActions()
	if err := c.sync(t.Context(), factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))); err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, a := range kube.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a.GetVerb())
		}
	}
	return kube, writes
}

func TestAdoptsTheCommunityCSIDriverInPlace(t *testing.T) {
	kube, writes := run(t, community())
	if len(writes) != 1 || writes[0] != "update" {
		t.Fatalf("writes %v, want one update (no delete and recreate)", writes)
	}
	got, err := kube.StorageV1().CSIDrivers().Get(t.Context(), "efs.csi.aws.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != "u-1" || len(got.OwnerReferences) != 0 {
		t.Fatalf("adopted CSIDriver UID %s owner references %v, want the same object without owner references", got.UID, got.OwnerReferences)
	}
	// The next sync finds nothing to do.
	if _, writes := run(t, got); len(writes) != 0 {
		t.Fatalf("second sync wrote %v, want nothing", writes)
	}
}

func TestCreatesAMissingCSIDriverAndLeavesItAlone(t *testing.T) {
	kube, writes := run(t)
	if len(writes) != 1 || writes[0] != "create" {
		t.Fatalf("writes %v, want one create", writes)
	}
	got, err := kube.StorageV1().CSIDrivers().Get(t.Context(), "efs.csi.aws.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, writes := run(t, got); len(writes) != 0 {
		t.Fatalf("sync of our own CSIDriver wrote %v", writes)
	}
}

func TestAdopt(t *testing.T) {
	required := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "efs.csi.aws.com"},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}}
	podInfo := community()
	podInfo.OwnerReferences = nil
	podInfo.Spec.PodInfoOnMount = ptr.To(true)
	noModes := community()
	noModes.Spec.VolumeLifecycleModes = nil
	attach := community()
	attach.Spec.AttachRequired = ptr.To(true)
	tests := []struct {
		name        string
		existing    *storagev1.CSIDriver
		wantChanged bool
	}{
		{name: "community: owner reference dropped", existing: community(), wantChanged: true},
		{name: "mutable field differs: updated", existing: podInfo, wantChanged: true},
		{name: "lifecycle modes unset mean Persistent", existing: noModes, wantChanged: true},
		{name: "immutable field differs: left to recreate", existing: attach, wantChanged: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := Adopt(tc.existing, required)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if changed && (len(got.OwnerReferences) != 0 || *got.Spec.PodInfoOnMount || got.Annotations[specHashAnnotation] == "") {
				t.Fatalf("adopted %+v", got)
			}
		})
	}
}

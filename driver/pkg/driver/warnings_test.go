package driver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/openshift/aws-efs-csi/driver/pkg/events"
)

// TestCreateVolumeUnknownParametersWarn: upstream ignores StorageClass keys it does not read (fstype, keys from
// other drivers' examples); so do we, and the claim gets one Warning Event naming them.
func TestCreateVolumeUnknownParametersWarn(t *testing.T) {
	kube := fake.NewClientset(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "ns", UID: "u1"}})
	e := newEnv(t, envOpts{events: events.Poster{Client: kube}})
	params := e.params("fstype", "ext4", "csi.storage.k8s.io/fstype", "ext4", "type", "gp3")
	for _, name := range []string{"pvc-unknown-1", "pvc-unknown-1"} { // a retry posts no second event
		if _, err := e.create(t, name, params); err != nil {
			t.Fatalf("CreateVolume with unknown keys: %v", err)
		}
	}
	evs, err := kube.CoreV1().Events("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 {
		t.Fatalf("%d events, want 1: %+v", len(evs.Items), evs.Items)
	}
	ev := evs.Items[0]
	if ev.Type != corev1.EventTypeWarning || ev.Reason != ReasonStorageClassParameters || ev.InvolvedObject.UID != "u1" ||
		!contains(ev.Message, "fstype, type") {
		t.Fatalf("event = %+v; want a warning naming fstype and type", ev)
	}
}

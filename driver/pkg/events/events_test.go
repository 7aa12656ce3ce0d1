package events

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWarnClaim(t *testing.T) {
	client := fake.NewClientset(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "app", UID: "uid-1"}})
	p := Poster{Client: client}
	if err := p.WarnClaim(t.Context(), "app", "data", "UnknownParameters", "ignored: fstype"); err != nil {
		t.Fatal(err)
	}
	evs, err := client.CoreV1().Events("app").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("events = %v, %v; want one", evs, err)
	}
	e := evs.Items[0]
	if e.Type != corev1.EventTypeWarning || e.InvolvedObject.UID != "uid-1" || e.InvolvedObject.Kind != "PersistentVolumeClaim" ||
		e.Reason != "UnknownParameters" || e.Message != "ignored: fstype" {
		t.Fatalf("event = %+v", e)
	}
	if err := p.WarnClaim(t.Context(), "app", "missing", "R", "m"); err == nil {
		t.Fatal("WarnClaim on a missing claim succeeded")
	}
}

package taint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func nodeWith(taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: corev1.NodeSpec{Taints: taints}}
}

var (
	startup = corev1.Taint{Key: Key, Effect: corev1.TaintEffectNoExecute}
	other   = corev1.Taint{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}
)

func TestRemoveOnce(t *testing.T) {
	cases := []struct {
		name     string
		taints   []corev1.Taint
		ready    error
		wantDone bool
		wantLeft []corev1.Taint
	}{
		{name: "removes only the start-up taint", taints: []corev1.Taint{other, startup}, wantDone: true, wantLeft: []corev1.Taint{other}},
		{name: "any effect", taints: []corev1.Taint{{Key: Key, Effect: corev1.TaintEffectNoSchedule}}, wantDone: true, wantLeft: nil},
		{name: "no taint is done", taints: []corev1.Taint{other}, wantDone: true, wantLeft: []corev1.Taint{other}},
		{name: "not ready keeps it", taints: []corev1.Taint{startup}, ready: errors.New("watchdog down"), wantLeft: []corev1.Taint{startup}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(nodeWith(tc.taints...))
			r := &Remover{Nodes: cs.CoreV1().Nodes(), NodeName: "worker", Ready: func(context.Context) error { return tc.ready }}
			done, err := r.RemoveOnce(t.Context())
			if done != tc.wantDone || (tc.ready != nil) != (err != nil) {
				t.Fatalf("RemoveOnce = %v, %v", done, err)
			}
			n, _ := cs.CoreV1().Nodes().Get(t.Context(), "worker", metav1.GetOptions{})
			if len(n.Spec.Taints) != len(tc.wantLeft) {
				t.Fatalf("taints left %v, want %v", n.Spec.Taints, tc.wantLeft)
			}
			for i := range tc.wantLeft {
				if n.Spec.Taints[i] != tc.wantLeft[i] {
					t.Fatalf("taints left %v, want %v", n.Spec.Taints, tc.wantLeft)
				}
			}
		})
	}
}

func TestRunWaitsForReadiness(t *testing.T) {
	cs := fake.NewSimpleClientset(nodeWith(startup))
	ready := make(chan struct{})
	asked := make(chan struct{}, 1)
	r := &Remover{Nodes: cs.CoreV1().Nodes(), NodeName: "worker", Interval: time.Millisecond, Ready: func(context.Context) error {
		select {
		case <-ready:
			return nil
		default:
			select {
			case asked <- struct{}{}:
			default:
			}
			return errors.New("not yet")
		}
	}}
	done := make(chan error, 1)
	go func() { done <- r.Run(t.Context()) }()
	// The event that proves it: Run asked three times and was told "not ready" (after the first answer it has had
	// every chance to remove the taint wrongly).
	for range 3 {
		<-asked
	}
	if n, _ := cs.CoreV1().Nodes().Get(t.Context(), "worker", metav1.GetOptions{}); len(n.Spec.Taints) != 1 {
		t.Fatal("taint removed before the driver was ready")
	}
	close(ready)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, _ := cs.CoreV1().Nodes().Get(t.Context(), "worker", metav1.GetOptions{}); len(n.Spec.Taints) != 0 {
		t.Fatalf("taints left: %v", n.Spec.Taints)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	cs := fake.NewSimpleClientset() // node does not exist: never done
	ctx, cancel := context.WithCancel(t.Context())
	r := &Remover{Nodes: cs.CoreV1().Nodes(), NodeName: "worker", Interval: time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
}

// TestRunStopsOnForbidden: a ServiceAccount without the RBAC gets one Forbidden answer, not one a second forever.
func TestRunStopsOnForbidden(t *testing.T) {
	for _, verb := range []string{"get", "patch"} {
		t.Run(verb, func(t *testing.T) {
			cs := fake.NewSimpleClientset(nodeWith(startup))
			calls := map[string]int{}
			cs.PrependReactor("*", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
				calls[a.GetVerb()]++
				if a.GetVerb() == verb {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "worker", errors.New("RBAC: denied"))
				}
				return false, nil, nil
			})
			r := &Remover{Nodes: cs.CoreV1().Nodes(), NodeName: "worker", Interval: time.Millisecond}
			err := r.Run(t.Context())
			var fe *ForbiddenError
			if !errors.As(err, &fe) || fe.Verb != verb || !apierrors.IsForbidden(err) {
				t.Fatalf("Run = %v, want a ForbiddenError for %s", err, verb)
			}
			if !strings.Contains(err.Error(), "may not "+verb+" nodes") {
				t.Fatalf("error %q does not name the missing permission", err)
			}
			if calls[verb] != 1 {
				t.Fatalf("%d %s requests, want exactly 1", calls[verb], verb)
			}
		})
	}
}

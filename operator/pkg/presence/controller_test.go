package presence

import (
	"context"
	"sync/atomic"
	"testing"

	opv1 "github.com/openshift/api/operator/v1"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/openshift/library-go/pkg/operator/resource/resourceapply"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

type gauge struct{ v float64 }

func (g *gauge) Set(v float64) { g.v = v }

// TestStartStopFollowsTheClusterCSIDriver walks the ClusterCSIDriver through missing → present → present →
// missing and checks the metric and that the driver controllers start once and stop once.
func TestStartStopFollowsTheClusterCSIDriver(t *testing.T) {
	inf := operatorinformers.NewSharedInformerFactory(operatorfake.NewClientset(), 0)
	drivers := inf.Operator().V1().ClusterCSIDrivers()
	var starts, stops atomic.Int32
	g := &gauge{v: -1}
	_, c := New(Options{
		Name: "efs.csi.aws.com", Drivers: drivers.Lister(), DriversInformer: drivers.Informer(), Missing: g,
		Start: func(ctx context.Context) (<-chan struct{}, error) {
			starts.Add(1)
			done := make(chan struct{})
			go func() { <-ctx.Done(); stops.Add(1); close(done) }()
			return done, nil
		},
		Clients: &resourceapply.ClientHolder{}, Assets: func(string) ([]byte, error) { return nil, nil },
	}, events.NewInMemoryRecorder("test", clock.RealClock{}))
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
	cr := &opv1.ClusterCSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "efs.csi.aws.com"}}

	steps := []struct {
		name                  string
		present               bool
		wantGauge             float64
		wantStarts, wantStops int32
		wantRunning           bool
	}{
		{name: "missing", present: false, wantGauge: 1},
		{name: "created", present: true, wantGauge: 0, wantStarts: 1, wantRunning: true},
		{name: "still there", present: true, wantGauge: 0, wantStarts: 1, wantRunning: true},
		{name: "deleted", present: false, wantGauge: 1, wantStarts: 1, wantStops: 1},
	}
	for _, s := range steps {
		if s.present {
			if err := drivers.Informer().GetIndexer().Add(cr); err != nil {
				t.Fatal(err)
			}
		} else if err := drivers.Informer().GetIndexer().Delete(cr); err != nil {
			t.Fatal(err)
		}
		if err := c.sync(t.Context(), syncCtx); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if g.v != s.wantGauge || starts.Load() != s.wantStarts || stops.Load() != s.wantStops || c.Running() != s.wantRunning {
			t.Fatalf("%s: gauge %v starts %d stops %d running %v; want %v %d %d %v", s.name, g.v, starts.Load(), stops.Load(), c.Running(),
				s.wantGauge, s.wantStarts, s.wantStops, s.wantRunning)
		}
	}
}

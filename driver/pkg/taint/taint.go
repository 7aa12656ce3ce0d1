package taint

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Key is the start-up taint the cluster administrator puts on new nodes; any effect is removed.
const Key = "efs.csi.aws.com/agent-not-ready"

// Nodes reads and patches Node objects; CoreV1().Nodes() of a client-go clientset satisfies it.
type Nodes interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error)
}

// Remover removes Key from one node once Ready passes.
type Remover struct {
	Nodes    Nodes
	NodeName string
	// Ready gates the removal (the node service's readiness); nil means ready.
	Ready func(ctx context.Context) error
	// Interval between attempts; default 1s.
	Interval time.Duration
}

// Run retries until the taint is gone (or was never there) or ctx ends.
func (r *Remover) Run(ctx context.Context) error {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Second
	}
	for {
		done, err := r.RemoveOnce(ctx)
		if done {
			return nil
		}
		if err != nil {
			klog.V(2).InfoS("Start-up taint still present; retrying", "node", r.NodeName, "taint", Key, "reason", err.Error())
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// RemoveOnce makes one attempt; done is true when the node no longer carries the taint.
func (r *Remover) RemoveOnce(ctx context.Context) (done bool, err error) {
	if r.Ready != nil {
		if err := r.Ready(ctx); err != nil {
			return false, fmt.Errorf("driver not ready: %w", err)
		}
	}
	node, err := r.Nodes.Get(ctx, r.NodeName, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get node %s: %w", r.NodeName, err)
	}
	kept := make([]corev1.Taint, 0, len(node.Spec.Taints))
	for _, t := range node.Spec.Taints {
		if t.Key != Key {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(node.Spec.Taints) {
		return true, nil
	}
	// test + replace: the patch fails, and is retried, if someone else changed the taints meanwhile.
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/spec/taints", "value": node.Spec.Taints},
		{"op": "replace", "path": "/spec/taints", "value": kept},
	})
	if err != nil {
		return false, err
	}
	if _, err := r.Nodes.Patch(ctx, r.NodeName, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("patch node %s: %w", r.NodeName, err)
	}
	klog.InfoS("Removed the start-up taint", "node", r.NodeName, "taint", Key)
	return r.verify(ctx)
}

func (r *Remover) verify(ctx context.Context) (bool, error) {
	node, err := r.Nodes.Get(ctx, r.NodeName, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get node %s: %w", r.NodeName, err)
	}
	for _, t := range node.Spec.Taints {
		if t.Key == Key {
			return false, fmt.Errorf("node %s still has taint %s after the patch", r.NodeName, Key)
		}
	}
	return true, nil
}

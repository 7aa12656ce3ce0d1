package taint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ForbiddenError says which permission on Nodes the driver's ServiceAccount lacks. Retrying cannot help until an
// administrator changes RBAC, so Run stops on it.
type ForbiddenError struct {
	// Verb is the denied verb: "get" or "patch".
	Verb string
	// Node is the Node the request was for.
	Node string
	// Err is the API server's answer.
	Err error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s node %s: the driver's ServiceAccount may not %s nodes: %v", e.Verb, e.Node, e.Verb, e.Err)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// Remover removes Key from one node once Ready passes.
type Remover struct {
	Nodes    Nodes
	NodeName string
	// Ready gates the removal (the node service's readiness); nil means ready.
	Ready func(ctx context.Context) error
	// Interval between attempts; default 1s.
	Interval time.Duration
}

// Run retries until the taint is gone (or was never there) or ctx ends. It stops at the first Forbidden answer,
// logging once which permission is missing (a *ForbiddenError is returned), instead of asking the API server
// every second for something RBAC will not allow.
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
		if fe := (*ForbiddenError)(nil); errors.As(err, &fe) {
			klog.ErrorS(err, "Start-up taint removal stopped: permission missing. Grant the driver's node ServiceAccount "+
				"get and patch on nodes, or set DISABLE_TAINT_WATCHER to turn taint removal off and remove the taint yourself",
				"node", r.NodeName, "taint", Key, "missingPermission", fe.Verb+" nodes")
			return err
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

// RemoveOnce makes one attempt; done is true when the node no longer carries the taint. A Forbidden answer is a
// *ForbiddenError.
func (r *Remover) RemoveOnce(ctx context.Context) (done bool, err error) {
	if r.Ready != nil {
		if err := r.Ready(ctx); err != nil {
			return false, fmt.Errorf("driver not ready: %w", err)
		}
	}
	node, err := r.get(ctx)
	if err != nil {
		return false, err
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
		return false, r.wrap("patch", err)
	}
	klog.InfoS("Removed the start-up taint", "node", r.NodeName, "taint", Key)
	return r.verify(ctx)
}

func (r *Remover) get(ctx context.Context) (*corev1.Node, error) {
	node, err := r.Nodes.Get(ctx, r.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, r.wrap("get", err)
	}
	return node, nil
}

// wrap turns a Forbidden answer into a *ForbiddenError and names the operation otherwise.
func (r *Remover) wrap(verb string, err error) error {
	if apierrors.IsForbidden(err) {
		return &ForbiddenError{Verb: verb, Node: r.NodeName, Err: err}
	}
	return fmt.Errorf("%s node %s: %w", verb, r.NodeName, err)
}

func (r *Remover) verify(ctx context.Context) (bool, error) {
	node, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	for _, t := range node.Spec.Taints {
		if t.Key == Key {
			return false, fmt.Errorf("node %s still has taint %s after the patch", r.NodeName, Key)
		}
	}
	return true, nil
}

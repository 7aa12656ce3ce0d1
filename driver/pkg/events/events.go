package events

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Component is the source component of the Events the driver posts (the CSI driver name).
const Component = "efs.csi.aws.com"

// Poster posts Events through client-go; the controller's service account needs get on
// persistentvolumeclaims and create on events (both in the upstream and operator RBAC).
type Poster struct {
	Client interface {
		CoreV1() corev1client.CoreV1Interface
	}
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// WarnClaim posts a Warning Event on the claim namespace/name. The claim is read first so that the Event carries
// its UID, which `kubectl describe pvc` matches Events by.
func (p Poster) WarnClaim(ctx context.Context, namespace, name, reason, message string) error {
	pvc, err := p.Client.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get claim %s/%s for an event: %w", namespace, name, err)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	t := metav1.NewTime(now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + ".", Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace,
			Name: name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion},
		Reason: reason, Message: message, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: Component},
		FirstTimestamp: t, LastTimestamp: t, Count: 1, ReportingController: Component,
	}
	if _, err := p.Client.CoreV1().Events(namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("post event on claim %s/%s: %w", namespace, name, err)
	}
	return nil
}

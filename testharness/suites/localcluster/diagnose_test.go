package localcluster

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A failure must show the pod, the container, the event and the log that explain it, and nothing about healthy pods.
func TestDiagnoseNamesThePodContainerEventAndLog(t *testing.T) {
	now := metav1.NewTime(time.Now())
	kube := fake.NewClientset(
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "efs-csi-node-x", Namespace: "openshift-cluster-csi-drivers"},
			Status: corev1.PodStatus{
				Phase:      corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [csi-driver]"}},
				ContainerStatuses: []corev1.ContainerStatus{{
					Name: "csi-driver", RestartCount: 3,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}},
				}},
			},
		},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "healthy", Namespace: "default"},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}}},
		},
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: "openshift-cluster-csi-drivers"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "efs-csi-node-x"},
			Type:           corev1.EventTypeWarning, Reason: "BackOff", Message: "Back-off restarting failed container csi-driver", LastTimestamp: now,
		},
	)
	var out strings.Builder
	diagnosePods(t.Context(), kube, &out)
	diagnoseEvents(t.Context(), kube, &out)
	got := out.String()
	for _, want := range []string{
		"pod openshift-cluster-csi-drivers/efs-csi-node-x", "condition Ready=False ContainersNotReady",
		"container csi-driver ready=false restarts=3 waiting CrashLoopBackOff: back-off 40s",
		"last run: terminated Error exit 2", "log (previous=false)", "log (previous=true)", "fake logs",
		"Warning Pod/efs-csi-node-x BackOff: Back-off restarting failed container csi-driver",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "default/healthy") {
		t.Errorf("diagnostics list a healthy pod:\n%s", got)
	}
}

package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Diagnose writes what explains a failure: every pod that is not Ready or has restarted, with its conditions and
// container states, the last lines of those containers' logs (and of the previous run), the cluster's recent
// events, and the last lines of the node's server logs.
func (c *Cluster) Diagnose(ctx context.Context, w io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if c.Config != nil {
		if kube, err := kubernetes.NewForConfig(c.Config); err == nil {
			diagnosePods(ctx, kube, w)
			diagnoseEvents(ctx, kube, w)
		}
	}
	if c.state != nil {
		for _, name := range []string{"kubelet", "containerd", "kube-proxy", "kube-controller-manager", "kube-scheduler"} {
			writeTail(w, filepath.Join(c.state.Dir, name+".log"), 30)
		}
	}
}

func diagnosePods(ctx context.Context, kube kubernetes.Interface, w io.Writer) {
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(w, "diagnose: listing pods: %v\n", err)
		return
	}
	for _, pod := range pods.Items {
		if podHealthy(&pod) {
			continue
		}
		fmt.Fprintf(w, "diagnose: pod %s/%s phase %s node %q: %s\n", pod.Namespace, pod.Name, pod.Status.Phase, pod.Spec.NodeName, pod.Status.Message)
		for _, cond := range pod.Status.Conditions {
			if cond.Status != corev1.ConditionTrue {
				fmt.Fprintf(w, "  condition %s=%s %s: %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
			}
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			fmt.Fprintf(w, "  container %s ready=%t restarts=%d %s\n", cs.Name, cs.Ready, cs.RestartCount, describeState(cs.State))
			if cs.LastTerminationState.Terminated != nil {
				fmt.Fprintf(w, "    last run: %s\n", describeState(cs.LastTerminationState))
			}
			for _, previous := range []bool{false, true} {
				if previous && cs.RestartCount == 0 {
					continue
				}
				tail := int64(40)
				b, err := kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: cs.Name, Previous: previous, TailLines: &tail}).DoRaw(ctx)
				if err == nil && len(b) > 0 {
					fmt.Fprintf(w, "    log (previous=%t):\n%s\n", previous, indent(string(b), "      "))
				}
			}
		}
	}
}

func podHealthy(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if !cs.Ready || cs.RestartCount > 0 {
			return false
		}
	}
	return pod.Status.Phase == corev1.PodRunning
}

func describeState(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("waiting %s: %s", s.Waiting.Reason, s.Waiting.Message)
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %s exit %d: %s", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message)
	case s.Running != nil:
		return "running since " + s.Running.StartedAt.Format(time.RFC3339)
	}
	return "no state"
}

func diagnoseEvents(ctx context.Context, kube kubernetes.Interface, w io.Writer) {
	events, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(w, "diagnose: listing events: %v\n", err)
		return
	}
	items := events.Items
	sort.Slice(items, func(i, j int) bool { return eventTime(&items[i]).Before(eventTime(&items[j])) })
	if len(items) > 60 {
		items = items[len(items)-60:]
	}
	fmt.Fprintf(w, "diagnose: last %d events:\n", len(items))
	for _, e := range items {
		fmt.Fprintf(w, "  %s %s %s/%s %s: %s\n", eventTime(&e).Format("15:04:05"), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}

func eventTime(e *corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func writeTail(w io.Writer, path string, lines int) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	fmt.Fprintf(w, "diagnose: last lines of %s:\n%s\n", path, indent(strings.Join(all, "\n"), "  "))
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

package localcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criNamespace is the containerd namespace of the CRI plugin, where the kubelet's images and containers live.
const criNamespace = "k8s.io"

// containerdConfig is Debian containerd 1.6's configuration (version 2) for a private instance. Findings on this
// machine (reference/local-peers.md §8.1): root lacks CAP_SYS_RESOURCE, so lowering oom_score_adj fails and every
// sandbox dies unless restrict_oom_score_adj is set; the kernel has cgroup v1 only, so no systemd cgroups. Pod
// network namespaces are kept under the state directory rather than the shared /var/run/netns.
var containerdConfig = template.Must(template.New("containerd").Parse(`version = 2
root = "{{.Dir}}/root"
state = "{{.Dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.PauseImage}}"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.CNIBinDir}}"
    conf_dir = "{{.CNIConfDir}}"
    max_conf_num = 1
`))

// containerdDirs are the places of one private containerd.
type containerdDirs struct {
	Dir, Socket, PauseImage, CNIBinDir, CNIConfDir string
}

func writeContainerdConfig(d containerdDirs) (string, error) {
	var b bytes.Buffer
	if err := containerdConfig.Execute(&b, d); err != nil {
		return "", err
	}
	path := filepath.Join(d.Dir, "config.toml")
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}

// dialCRI connects to containerd's CRI service and waits until it answers.
func dialCRI(ctx context.Context, socket string, timeout time.Duration) (runtimeapi.RuntimeServiceClient, func(), error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := rt.Version(cctx, &runtimeapi.VersionRequest{})
		cancel()
		if err == nil {
			return rt, func() { conn.Close() }, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("containerd CRI on %s not answering after %s: %w", socket, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// importImage loads a docker or OCI archive into containerd's CRI namespace.
func importImage(ctx context.Context, socket, archive string) error {
	cmd := exec.CommandContext(ctx, "ctr", "--address", socket, "--namespace", criNamespace, "images", "import", archive)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", archive, err, out)
	}
	return nil
}

// removeAllSandboxes stops and removes every pod sandbox through the CRI, which kills its containers, tears its
// network down (CNI DEL) and removes its network namespace.
func removeAllSandboxes(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, sb := range resp.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping sandbox %s (%s/%s): %w", sb.Id, sb.Metadata.Namespace, sb.Metadata.Name, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox %s: %w", sb.Id, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// shimSocket is where containerd 1.6 puts the socket of the shim of task id: a fixed directory, named by a hash
// of containerd's address, the namespace and the id.
func shimSocket(containerdSocket, namespace, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(containerdSocket, namespace, id)))
	return fmt.Sprintf("/run/containerd/s/%x", sum)
}

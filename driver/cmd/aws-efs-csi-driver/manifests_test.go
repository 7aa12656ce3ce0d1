package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/openshift/aws-efs-csi/driver/pkg/driver"
	"github.com/openshift/aws-efs-csi/driver/pkg/provision"
)

// operatorAssets is where the operator keeps the Deployment and DaemonSet it runs this binary with, and
// driverContainerfile the image whose ENTRYPOINT adds its own arguments in front of theirs.
const (
	operatorAssets      = "../../../operator/assets/driver"
	driverContainerfile = "../../../images/aws-efs-csi-driver/Containerfile"
)

var (
	assetPlaceholder = regexp.MustCompile(`\$\{[A-Z_]+\}`)
	envReference     = regexp.MustCompile(`\$\(([A-Z_]+)\)`)
)

// TestOperatorManifestsStartTheDriver parses the csi-driver container's arguments exactly as the pod runs them:
// the image's ENTRYPOINT arguments, then the operator's args (placeholders filled, $(VAR) expanded from the
// container env), plus the arguments the operator's hooks add; and checks that this binary accepts them in the
// intended mode. It keeps the two modules in step: a flag renamed
// here or misspelled there fails this test instead of a node pod.
func TestOperatorManifestsStartTheDriver(t *testing.T) {
	tests := []struct {
		file     string
		hookArgs []string
		wantMode Mode
	}{
		{file: "controller.yaml", hookArgs: []string{"--tags=kubernetes.io/cluster/x:owned team:storage"}, wantMode: ModeController},
		{file: "node.yaml", hookArgs: []string{"--vol-metrics-opt-in=true", "--vol-metrics-refresh-period=30", "--vol-metrics-fs-rate-limit=10"}, wantMode: ModeNode},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c := driverContainer(t, filepath.Join(operatorAssets, tt.file))
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			args := entrypointArgs(t)
			for _, a := range c.Args {
				args = append(args, envReference.ReplaceAllStringFunc(a, func(ref string) string {
					return env[envReference.FindStringSubmatch(ref)[1]]
				}))
			}
			args = append(args, tt.hookArgs...)
			fs := pflag.NewFlagSet("aws-efs-csi-driver", pflag.ContinueOnError)
			var opts Options
			opts.AddFlags(fs)
			if err := fs.Parse(args); err != nil {
				t.Fatalf("the driver refuses the arguments of %s %q: %v", tt.file, args, err)
			}
			opts.ApplyEnv(fs, func(name string) string { return env[name] })
			if err := opts.Validate(); err != nil {
				t.Fatalf("the driver refuses the arguments of %s %q: %v", tt.file, args, err)
			}
			// The default install must start the upstream driver too: only upstream v3.4.1's flags (12.8).
			upstream := map[string]bool{}
			for _, f := range upstreamFlags {
				upstream[strings.SplitN(strings.TrimLeft(f, "-"), "=", 2)[0]] = true
			}
			for _, a := range c.Args {
				if name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]; !upstream[name] {
					t.Errorf("%s passes %s, which the upstream driver v3.4.1 refuses; use an environment variable", tt.file, a)
				}
			}
			if opts.Mode != tt.wantMode {
				t.Fatalf("%s starts the driver in mode %q, want %q", tt.file, opts.Mode, tt.wantMode)
			}
		})
	}
}

// entrypointArgs returns the arguments after the program in the driver image's exec-form ENTRYPOINT.
func entrypointArgs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(driverContainerfile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no exec-form ENTRYPOINT", driverContainerfile)
	}
	var argv []string
	if err := json.Unmarshal(m[1], &argv); err != nil || len(argv) == 0 {
		t.Fatalf("%s ENTRYPOINT %s: %v", driverContainerfile, m[1], err)
	}
	return argv[1:]
}

// driverContainer reads the csi-driver container of a Deployment or DaemonSet asset.
func driverContainer(t *testing.T, path string) corev1.Container {
	t.Helper()
	for _, c := range podSpec(t, path).Containers {
		if c.Name == "csi-driver" {
			return c
		}
	}
	t.Fatalf("%s has no csi-driver container", path)
	return corev1.Container{}
}

// podSpec reads the pod template of a Deployment or DaemonSet asset, placeholders filled.
func podSpec(t *testing.T, path string) corev1.PodSpec {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = assetPlaceholder.ReplaceAll(data, []byte("2"))
	var workload struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &workload); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return workload.Spec.Template.Spec
}

// operatorTagsContract holds resource tags and the --tags argument the operator's tags hook builds for them (the
// operator's TestTagsArgContract checks that side).
const operatorTagsContract = "../../../operator/pkg/hooks/testdata/tags-contract.json"

// TestOperatorTagsArgument parses the operator's --tags arguments with the driver's flags and tag parser: every
// resource tag, ':' and ' ' included, must come back unchanged next to the cluster's ownership tag.
func TestOperatorTagsArgument(t *testing.T) {
	data, err := os.ReadFile(operatorTagsContract)
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name string `json:"name"`
		Tags []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"tags"`
		Arg string `json:"arg"`
	}
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatalf("%s: %v", operatorTagsContract, err)
	}
	for _, r := range rows {
		t.Run(r.Name, func(t *testing.T) {
			fs := pflag.NewFlagSet("aws-efs-csi-driver", pflag.ContinueOnError)
			var opts Options
			opts.AddFlags(fs)
			if err := fs.Parse([]string{"--mode=controller", r.Arg}); err != nil {
				t.Fatal(err)
			}
			if err := opts.Validate(); err != nil {
				t.Fatalf("the driver refuses the operator's %q: %v", r.Arg, err)
			}
			got, warnings := provision.ParseTags(opts.Tags)
			if len(warnings) != 0 {
				t.Fatal(warnings)
			}
			want := map[string]string{"kubernetes.io/cluster/c-1": "owned"}
			for _, tag := range r.Tags {
				want[tag.Key] = tag.Value
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the driver reads the operator's %q as %q, want %q", r.Arg, got, want)
			}
		})
	}
}

// TestControllerManifestPreparesEFSUtils runs the controller with the operator's arguments: when they turn on
// root-directory deletion, the controller mounts with mount.efs, so it must render efs-utils.conf where mount.efs
// reads it (the image moved efs-utils' own files to the static directory), in a container whose root file system
// is writable, and our efs-utils must load that file. The efs-utils locations are redirected to a temporary
// directory (the defaults are host paths).
func TestControllerManifestPreparesEFSUtils(t *testing.T) {
	c := driverContainer(t, filepath.Join(operatorAssets, "controller.yaml"))
	fs := pflag.NewFlagSet("aws-efs-csi-driver", pflag.ContinueOnError)
	var opts Options
	opts.AddFlags(fs)
	if err := fs.Parse(append(entrypointArgs(t), c.Args...)); err != nil {
		t.Fatal(err)
	}
	if !opts.DeleteAccessPointRootDir {
		t.Skip("controller.yaml does not turn on --delete-access-point-root-dir: the controller never mounts")
	}
	if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged || (sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem) {
		t.Fatalf("controller.yaml csi-driver securityContext %+v: root-directory deletion mounts and links /etc/amazon/efs, want privileged with a writable root file system", sc)
	}
	var local Options
	lfs := pflag.NewFlagSet("local", pflag.ContinueOnError)
	local.AddFlags(lfs)
	if err := lfs.Parse(nodeTestArgs(t)); err != nil {
		t.Fatal(err)
	}
	opts.Node = local.Node
	opts.Endpoint = "unix://" + filepath.Join(t.TempDir(), "csi.sock")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	opts.Region, opts.AvailabilityZone = "us-east-1", "us-east-1a"
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, &opts, env{}) }()
	conf := filepath.Join(opts.Node.EFSUtilsConfigLink, "efs-utils.conf")
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(conf); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("controller with the operator's arguments: %v", err)
	}
	script := `import sys
sys.path.insert(0, sys.argv[1])
from efs_utils import config
c = config.load(sys.argv[2], env={})
print(c.port_range(), c.dns_name_suffix(None), c.stunnel_cafile(None), c.poll_interval_sec())`
	out, err := exec.Command("python3", "-c", script, "../../../efs-utils", conf).CombinedOutput()
	if err != nil {
		t.Fatalf("efs-utils cannot load the controller's %s: %v\n%s", conf, err, out)
	}
}

// TestOperatorManifestsWireSidecars checks that every sidecar talks to the socket the driver listens on (same
// volume, same file), that the liveness sidecar serves the port the driver container's liveness probe asks, and
// that the registrar registers the socket's host path with kubelet.
func TestOperatorManifestsWireSidecars(t *testing.T) {
	for _, file := range []string{"controller.yaml", "node.yaml"} {
		t.Run(file, func(t *testing.T) {
			spec := podSpec(t, filepath.Join(operatorAssets, file))
			containers := map[string]corev1.Container{}
			for _, c := range spec.Containers {
				containers[c.Name] = c
			}
			drv := containers["csi-driver"]
			env := map[string]string{}
			for _, e := range drv.Env {
				env[e.Name] = e.Value
			}
			var endpoint string
			for _, a := range drv.Args {
				if v, ok := strings.CutPrefix(a, "--endpoint="); ok {
					endpoint = envReference.ReplaceAllStringFunc(v, func(ref string) string { return env[envReference.FindStringSubmatch(ref)[1]] })
				}
			}
			sock, err := driver.SocketPath(endpoint)
			if err != nil {
				t.Fatal(err)
			}
			vol, rel := onVolume(t, drv, sock)
			for _, c := range spec.Containers {
				addr := flagValue(c.Args, "--csi-address")
				if c.Name == "csi-driver" || addr == "" {
					continue
				}
				if v, r := onVolume(t, c, addr); v != vol || r != rel {
					t.Errorf("%s --csi-address=%s is %s/%s, but the driver listens on %s/%s", c.Name, addr, v, r, vol, rel)
				}
				if c.Name == "csi-node-driver-registrar" {
					want := filepath.Join(hostPath(t, spec, vol), rel)
					if got := flagValue(c.Args, "--kubelet-registration-path"); got != want {
						t.Errorf("registrar --kubelet-registration-path=%s, want the socket's host path %s", got, want)
					}
				}
			}
			probe := containers["csi-liveness-probe"]
			port := flagValue(probe.Args, "--health-port")
			if ep := flagValue(probe.Args, "--http-endpoint"); ep != "" {
				_, port, _ = strings.Cut(ep, ":")
			}
			if drv.LivenessProbe == nil || drv.LivenessProbe.HTTPGet == nil {
				t.Fatal("csi-driver has no HTTP liveness probe")
			}
			probePort := drv.LivenessProbe.HTTPGet.Port.String()
			for _, p := range drv.Ports {
				if p.Name == probePort {
					probePort = strconv.Itoa(int(p.ContainerPort))
				}
			}
			if port == "" || probePort != port || drv.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("csi-driver liveness probe asks port %s %s, the liveness sidecar serves /healthz on %q", probePort, drv.LivenessProbe.HTTPGet.Path, port)
			}
		})
	}
}

func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// onVolume returns the volume and the path inside it of an absolute path in container c.
func onVolume(t *testing.T, c corev1.Container, path string) (string, string) {
	t.Helper()
	best, rel := "", ""
	for _, m := range c.VolumeMounts {
		dir := filepath.Clean(m.MountPath)
		if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") && len(dir) > len(best) {
			best, rel = m.Name, r
		}
	}
	if best == "" {
		t.Fatalf("%s: %s is on no volume", c.Name, path)
	}
	return best, rel
}

func hostPath(t *testing.T, spec corev1.PodSpec, name string) string {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	t.Fatalf("volume %s is not a hostPath", name)
	return ""
}
